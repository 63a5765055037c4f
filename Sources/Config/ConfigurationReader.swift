import Gateway
import Yams

/// Walks a composed YAML document and collects every problem with its line and column instead of
/// stopping at the first. Each accessor returns nil for a value it could not read (after recording
/// why), so the caller keeps the default and goes on.
struct ConfigurationReader {
    let file: String
    private(set) var errors: [ConfigurationError] = []

    init(file: String) {
        self.file = file
    }

    mutating func report(
        _ code: ConfigurationError.Code, at node: Node?, _ message: String, fix: String
    ) {
        errors.append(ConfigurationError(code, at: location(of: node), message, fix: fix))
    }

    mutating func report(_ error: ConfigurationError) {
        errors.append(error)
    }

    func location(of node: Node?) -> ConfigurationError.Location {
        guard let mark = node?.mark else { return .wholeFile(file) }
        return .file(file, line: mark.line, column: mark.column)
    }

    // MARK: Sections

    /// The values of a section by key. Reports a section that is not a mapping, keys that are not
    /// known (with the nearest known key as a suggestion) and keys that are not text. A null section
    /// (`mqtt:` with nothing below) is an empty one.
    mutating func section(_ node: Node?, path: String, keys: [String]) -> [String: (key: Node, value: Node)] {
        guard let node, node.kind != .null else { return [:] }
        guard let mapping = node.mapping else {
            report(
                .wrongType, at: node, "'\(path)' must be a section of keys (\(keys.joined(separator: ", ")))",
                fix: "write the keys indented below '\(path):'")
            return [:]
        }
        var values: [String: (key: Node, value: Node)] = [:]
        for (key, value) in mapping {
            guard let name = key.scalar?.string else {
                report(
                    .wrongType, at: key, "a key in '\(path)' is not text",
                    fix: "use one of: \(keys.joined(separator: ", "))")
                continue
            }
            guard keys.contains(name) else {
                let qualified = path.isEmpty ? name : "\(path).\(name)"
                if let suggestion = Self.nearest(to: name, in: keys) {
                    report(
                        .unknownKey, at: key, "unknown key '\(qualified)'; did you mean '\(suggestion)'?",
                        fix: "rename it to '\(suggestion)'")
                } else {
                    report(
                        .unknownKey, at: key, "unknown key '\(qualified)'",
                        fix: "remove it; the keys \(path.isEmpty ? "at the top" : "of '\(path)'") are: "
                            + keys.joined(separator: ", "))
                }
                continue
            }
            values[name] = (key, value)
        }
        return values
    }

    // MARK: Scalars

    mutating func string(_ node: Node?, _ path: String) -> String? {
        guard let node else { return nil }
        guard let scalar = node.scalar, node.kind != .null else {
            report(.wrongType, at: node, "'\(path)' must be text", fix: "write a single value after '\(path):'")
            return nil
        }
        return scalar.string
    }

    /// Text, or nil for an explicit `null` / empty value (the setting is off).
    mutating func optionalString(_ node: Node?, _ path: String) -> String?? {
        guard let node else { return .none }
        if node.kind == .null { return .some(nil) }
        return string(node, path).map { .some($0) }
    }

    mutating func int(_ node: Node?, _ path: String) -> Int? {
        guard let node else { return nil }
        guard node.kind == .int, let value = node.int else {
            report(
                .wrongType, at: node, "'\(path)' must be a whole number, not '\(node.scalar?.string ?? "a section")'",
                fix: "write a number such as \(path.hasSuffix("keepAlive") ? "30" : path.hasSuffix("QoS") ? "1" : "10")"
            )
            return nil
        }
        return value
    }

    /// A whole or decimal number.
    mutating func number(_ node: Node?, _ path: String) -> Double? {
        guard let node else { return nil }
        guard node.kind == .int || node.kind == .float, let value = node.float else {
            report(
                .wrongType, at: node, "'\(path)' must be a number, not '\(node.scalar?.string ?? "a section")'",
                fix: "write a number of seconds such as 10 or 2.5")
            return nil
        }
        return value
    }

    mutating func bool(_ node: Node?, _ path: String) -> Bool? {
        guard let node else { return nil }
        guard node.kind == .bool, let value = node.bool else {
            report(
                .wrongType, at: node, "'\(path)' must be true or false, not '\(node.scalar?.string ?? "a section")'",
                fix: "write true or false")
            return nil
        }
        return value
    }

    // MARK: Suggestions

    /// The known key a misspelt one most likely meant: the same key in another case or with `_`/`-`
    /// (`client_id` for `clientId`), one it abbreviates (`warn` for `warning`), or one within a small
    /// edit distance (`levle` for `level`).
    static func nearest(to key: String, in keys: [String]) -> String? {
        func normalized(_ text: String) -> String {
            text.lowercased().filter { $0 != "_" && $0 != "-" }
        }
        let typed = normalized(key)
        if let exact = keys.first(where: { normalized($0) == typed }) { return exact }
        if typed.count >= 3, let abbreviated = keys.first(where: { normalized($0).hasPrefix(typed) }) {
            return abbreviated
        }
        let scored = keys.map { ($0, editDistance(normalized($0), typed)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        let tolerance = typed.count >= 9 ? 3 : typed.count >= 5 ? 2 : 1
        return best.1 <= tolerance ? best.0 : nil
    }

    /// Levenshtein distance between two strings, by characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

extension Node {
    /// The node's resolved YAML type (`Tag.name` is not public in Yams).
    var kind: Tag.Name { Tag.Name(rawValue: tag.description) }
}
