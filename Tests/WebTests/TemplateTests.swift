import Testing

@testable import HomeModel
@testable import Web

@Suite("The page's templates")
struct TemplateTests {
    /// A quote followed by a combining mark is one Swift character: escaping by character missed it.
    static let hostile = "<script>alert(1)</script>\"\u{301} onfocus=\"x' &amp;"

    @Test("text from a form or the model is escaped, in element content and in attributes, by scalar")
    func escaping() {
        let login = Pages.login(loginToken: "0123", account: Self.hostile, problem: Self.hostile)
        let problem = Pages.problem(title: Self.hostile, message: Self.hostile, session: nil)
        for page in [login, problem] {
            #expect(!page.contains("<script>alert"))
            #expect(!page.unicodeScalars.split(separator: "\u{301}").dropFirst().contains { $0.first != " " })
            #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;\u{301} onfocus=&quot;x&#39; &amp;amp;"))
        }
        #expect(login.contains(#"name="csrf" value="0123""#))
    }

    @Test("the frame links the account's homes and logs it out with its session's token")
    func frame() {
        let session = Session(token: "t", account: "owner <1>", csrf: "c0ffee", expires: .now)
        let homes = [HomeSummary(id: "h", name: "Main House", isPrimary: true, role: .administrator)]
        let page = Pages.homes(session: session, homes: homes, notice: Notice(succeeded: false, text: "No", code: "x"))
        #expect(page.contains(#"<a href="/home?name=Main%20House">Main House</a>"#))
        #expect(page.contains(#"<a href="/health">Health</a>"#))
        #expect(page.contains(#"<input type="hidden" name="csrf" value="c0ffee">"#))
        #expect(page.contains("Log out owner &lt;1&gt;</button>"))
        #expect(page.contains(#"<p id="notice" class="notice error" role="status">No (x)</p>"#))
        #expect(page.contains(#"<span class="badge">administrator</span> <span class="badge">primary</span>"#))
        #expect(page.hasPrefix("<!doctype html>") && page.hasSuffix("</html>\n"))
    }

    @Test("a card, its rows and its forms escape by scalar too, and their indentation does not reach the page")
    func cardEscaping() {
        let hostile = Self.hostile
        let row = Pages.Row(
            key: hostile, labelID: elementID("l-", hostile), label: hostile, labelledBy: elementID("l-", hostile),
            output: (hostile, hostile), fields: [(hostile, hostile)],
            choice: (false, [Pages.Option(value: hostile, text: hostile, selected: true)]))
        let request = Pages.Request(
            operation: "renameRoom", fields: [("room", hostile)], inputs: [("name", hostile)],
            selects: [("room", hostile, [Pages.Option(value: hostile, text: hostile)])], button: hostile,
            confirm: hostile)
        let card = Pages.Card(
            id: hostile, headingID: elementID("h-", hostile), icon: "", name: hostile, reachable: false,
            batteryLow: true, primary: [(hostile, [row])], more: [], fields: [("room", hostile)], edit: [request])
        let page = Templates.render(card, "card")
        #expect(!page.contains("<script>alert"))
        #expect(!page.unicodeScalars.split(separator: "\u{301}").dropFirst().contains { $0.first != " " })
        #expect(
            page.contains("<h4>&lt;script&gt;alert(1)&lt;/script&gt;&quot;\u{301} onfocus=&quot;x&#39; &amp;amp;</h4>"))
        #expect(
            page.contains(#"data-confirm="&lt;script&gt;"#) && page.contains(#"<button type="submit" class="danger">"#))
        #expect(page.contains(#"<option value="&lt;script&gt;alert(1)&lt;/script&gt;&quot;\#u{301} onfocus"#))
        #expect(!page.contains("  ") && page.split(separator: "\n").count == 2, "one line break: before <h3>")
    }
}
