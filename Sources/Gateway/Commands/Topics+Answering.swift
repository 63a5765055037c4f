extension Topics {
    private static let commandKeywords: Set<String> = ["set", "$set", "$identify", "$run"]

    /// Who sent a command topic that `parse` refused, so that the refusal can be answered: the level
    /// after the last command keyword when it ends the topic, or a request's account level. Behind
    /// the generated access rules the broker lets a client publish only topics that end in (or, for
    /// requests, carry) its own name, so this is the sender. Nil when the topic names nobody.
    func sender(ofMalformed topic: String) -> String? {
        guard topic.hasPrefix(base + "/") else { return nil }
        let levels = topic.dropFirst(base.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        let candidate: Substring?
        if levels.count >= 2, Self.commandKeywords.contains(String(levels[levels.count - 2])) {
            candidate = levels.last
        } else if levels.count >= 2, levels[0] == "$request" {
            candidate = levels[1]
        } else {
            candidate = nil
        }
        guard let candidate, !candidate.isEmpty,
            !candidate.unicodeScalars.contains(where: {
                $0 == "+" || $0 == "#" || $0.properties.generalCategory == .control
            })
        else { return nil }
        return String(candidate)
    }
}
