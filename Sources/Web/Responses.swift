import HTTPTypes
import HomeModel
import Hummingbird
import JSON
import NIOCore

/// The page's kinds of answer; none is cached but the assets, which are checked again each time.
extension Response {
    static func page(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// A page that only says what went wrong.
    static func problem(
        _ title: String, _ message: String, session: Session? = nil, homes: [HomeSummary] = [],
        status: HTTPResponse.Status
    ) -> Response {
        page(Pages.problem(title: title, message: message, session: session, homes: homes), status: status)
    }

    /// The answer to the page's script: `{"ok":…,"message":…,"code":…}`.
    static func json(_ notice: Notice, status: HTTPResponse.Status = .ok) -> Response {
        var members: [(key: String, value: JSON)] = [
            ("ok", .bool(notice.succeeded)), ("message", .string(notice.text)),
        ]
        if let code = notice.code { members.append(("code", .string(code))) }
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSON.object(members).bytes)))
    }

    static func asset(_ text: String, type: String) -> Response {
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// `303 See Other` to `location`.
    static func seeOther(_ location: String) -> Response {
        var response = redirect(to: location, type: .normal)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
