import Foundation
import Yams

/// What decoding one config file gathers, handed to every section in the decoder's `userInfo`:
/// every problem found, located in the file (or at the environment variable that set the value),
/// so that loading reports them all at once instead of stopping at the first.
final class ConfigurationDecoding {
    static let key = CodingUserInfoKey(rawValue: "homegate.configurationDecoding")!

    let file: String
    let root: Node
    let environment: [String: String]
    private(set) var problems: [ConfigurationError] = []

    init(file: String, root: Node, environment: [String: String]) {
        self.file = file
        self.root = root
        self.environment = environment
    }

    /// The environment's value for `name`, if it is set and not empty.
    func variable(_ name: String) -> String? {
        environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Where `path` leads in the file: the value, or with `key` the key that names it.
    func location(_ path: [any CodingKey], key: Bool = false) -> ConfigurationError.Location {
        .of(path, in: root, file: file, key: key)
    }

    func report(
        _ code: ConfigurationError.Code, at location: ConfigurationError.Location, _ message: String, fix: String
    ) {
        problems.append(ConfigurationError(code, at: location, message, fix: fix))
    }
}

/// Thrown by a section that has reported why it cannot be read, so that nobody reports it again.
private struct AlreadyReported: Error {}

/// The settings of one section of the config file: its keys, and how it reads them
/// (``ConfigurationSection``) over the defaults `init()` gives.
protocol ConfigurationSettings {
    associatedtype CodingKeys: CodingKey & CaseIterable
    init()
    mutating func read(_ file: ConfigurationSection<CodingKeys>)
}

extension ConfigurationSettings {
    init(reading file: ConfigurationSection<CodingKeys>) {
        self.init()
        read(file)
    }
}

/// One mapping of the config file, read key by key. A key the section does not know, a value of
/// the wrong type and one its check refuses are each reported at their line, and that setting
/// keeps its default; `null` (or nothing after the colon) is an empty section.
///
/// A check returns what is wrong with a value, or nil; `fix` says what to write instead, by
/// default the setting's default.
struct ConfigurationSection<Key: CodingKey & CaseIterable> {
    let decoding: ConfigurationDecoding
    let path: [any CodingKey]
    private let container: KeyedDecodingContainer<Key>?
}

extension ConfigurationSection {
    init(_ decoder: any Decoder) throws {
        guard let decoding = decoder.userInfo[ConfigurationDecoding.key] as? ConfigurationDecoding else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a config file"))
        }
        let path = decoder.codingPath
        let node = decoding.root.trail(path).last?.value
        let names = Key.allCases.map(\.stringValue)
        guard let mapping = node?.mapping else {
            guard node?.kind != .null else {
                self.init(decoding: decoding, path: path, container: nil)
                return
            }
            decoding.report(
                .wrongType, at: decoding.location(path),
                "'\(path.dotted)' must be a section of keys (\(names.joined(separator: ", ")))",
                fix: "write the keys indented below '\(path.dotted):'")
            throw AlreadyReported()
        }
        self.init(decoding: decoding, path: path, container: try decoder.container(keyedBy: Key.self))
        for key in mapping.keys where !names.contains(key.string ?? "") {
            reportUnknown(key, among: names)
        }
    }

    private func reportUnknown(_ key: Node, among names: [String]) {
        let location = ConfigurationError.Location.of(key.mark, file: decoding.file)
        let within = path.isEmpty ? "at the top" : "of '\(path.dotted)'"
        guard let name = key.scalar?.string else {
            decoding.report(
                .wrongType, at: location, "a key \(within) is not text",
                fix: "use one of: \(names.joined(separator: ", "))")
            return
        }
        let qualified = (path + [PathKey(name)]).dotted
        if let suggestion = ConfigurationDecoding.nearest(to: name, in: names) {
            decoding.report(
                .unknownKey, at: location, "unknown key '\(qualified)'; did you mean '\(suggestion)'?",
                fix: "rename it to '\(suggestion)'")
        } else {
            decoding.report(
                .unknownKey, at: location, "unknown key '\(qualified)'",
                fix: "remove it; the keys \(within) are: \(names.joined(separator: ", "))")
        }
    }

    // MARK: Reading

    /// `mqtt.keepAlive` for `keepAlive` in `mqtt`.
    func name(_ key: Key) -> String { (path + [key]).dotted }

    func location(_ key: Key, item: Int? = nil) -> ConfigurationError.Location {
        decoding.location(path + [key] + (item.map { [PathKey($0)] } ?? []))
    }

    /// Where the key itself is written, for a problem with the setting as a whole.
    func keyLocation(_ key: Key) -> ConfigurationError.Location { decoding.location(path + [key], key: true) }

    func contains(_ key: Key) -> Bool { container?.contains(key) ?? false }

    /// Whether `key` is there with `null` (or nothing) after its colon.
    func isNull(_ key: Key) -> Bool { contains(key) && decoding.root.trail(path + [key]).last?.value.kind == .null }

    func report(_ code: ConfigurationError.Code = .invalidValue, at key: Key, _ message: String, fix: String) {
        decoding.report(code, at: location(key), message, fix: fix)
    }

    /// The value at `key` as a `T` (`null` is none, except for a section) that `check` accepts;
    /// nil when the key is absent or its value is not usable.
    func value<T: Decodable>(_ key: Key, example: T? = nil, fix: String? = nil, _ check: (T) -> String? = { _ in nil })
        -> T?
    {
        guard let container, contains(key) else { return nil }
        let node = decoding.root.trail(path + [key]).last?.value
        do {
            if node?.kind == .null, T.self is any ScalarConstructible.Type {
                throw DecodingError.valueNotFound(T.self, .init(codingPath: path + [key], debugDescription: "null"))
            }
            let value = try container.decode(T.self, forKey: key)
            guard let problem = check(value) else { return value }
            report(
                at: key, problem,
                fix: fix ?? example.map { "use \(Self.yaml($0)), or leave it out for the default" } ?? Self.anyFix)
        } catch is AlreadyReported {
        } catch {
            let (message, fix) = wrongType(T.self, key, found: node, example: example.map(Self.yaml))
            report(.wrongType, at: key, message, fix: fix)
        }
        return nil
    }

    /// Reads `setting` from `key`; it keeps its value when the key is absent or its value not usable.
    func read<T: Decodable>(_ setting: inout T, _ key: Key, fix: String? = nil, _ check: (T) -> String? = { _ in nil })
    {
        setting = value(key, example: setting, fix: fix, check) ?? setting
    }

    /// Reads a whole number within `range`; another is "'section.key' is N; it must be low...high" and `unit`.
    func read(_ setting: inout Int, _ key: Key, within range: ClosedRange<Int>, unit: String = "") {
        read(&setting, key) {
            range.contains($0)
                ? nil : "'\(name(key))' is \($0); it must be \(range.lowerBound)...\(range.upperBound)\(unit)"
        }
    }

    /// Reads a setting that `null` turns off.
    func readOrNull<T: Decodable>(
        _ setting: inout T?, _ key: Key, fix: String? = nil, _ check: (T) -> String? = { _ in nil }
    ) {
        setting = isNull(key) ? nil : value(key, fix: fix, check) ?? setting
    }

    /// A number of seconds, under a year whatever `check` allows, to the millisecond.
    func seconds(_ key: Key, example: Double, fix: String? = nil, _ check: (Double) -> String?) -> Duration? {
        let seconds = value(key, example: example, fix: fix) {
            check($0) ?? ($0.magnitude < 31_536_000 ? nil : "'\(name(key))' is \($0) seconds; it must be under a year")
        }
        return seconds.map { .milliseconds(Int64(($0 * 1000).rounded())) }
    }

    /// Text from `variable` when the environment sets it, else from `key` (whose type is checked
    /// either way); `check` is reported where the text came from.
    func text(
        _ key: Key, overriddenBy variable: String, fix: String? = nil, _ check: (String) -> String? = { _ in nil }
    )
        -> String?
    {
        let fromFile: String? = value(key)
        guard let text = decoding.variable(variable) ?? fromFile else { return nil }
        guard let problem = check(text) else { return text }
        let location = decoding.variable(variable) != nil ? .environment(variable) : location(key)
        decoding.report(.invalidValue, at: location, problem, fix: fix ?? Self.anyFix)
        return nil
    }

    /// The path of a file at `key`, reported when the gateway cannot read the file.
    func path(_ key: Key) -> String? {
        let path: String? = value(key)
        if let path, !FileManager.default.isReadableFile(atPath: path) {
            let exists = FileManager.default.fileExists(atPath: path)
            report(
                .unreadableFile, at: key,
                "'\(name(key))' names '\(path)', which \(exists ? "the gateway may not read" : "does not exist")",
                fix: exists ? "let the gateway's user read it (chmod/chown)" : "correct the path or create the file")
        }
        return path
    }

    /// The entries of the list at `key` that `check` accepts; each refused one is reported at its line.
    func list(_ key: Key, example: [String], fix: String, _ check: (String) -> String?) -> [String]? {
        value(key, example: example).map { entries in
            entries.indices.compactMap { index in
                guard let problem = check(entries[index]) else { return entries[index] }
                decoding.report(.invalidValue, at: location(key, item: index), problem, fix: fix)
                return nil
            }
        }
    }

    /// The section at `key` read by `body`; nil when it is not a section (reported) or the file leaves
    /// it out, unless `evenIfAbsent` (for the settings that the environment sets all the same).
    func section<Keys, T>(
        _ key: Key, _ keys: Keys.Type, evenIfAbsent: Bool = false, _ body: (ConfigurationSection<Keys>) -> T
    ) -> T? {
        guard contains(key) else {
            return evenIfAbsent ? body(.init(decoding: decoding, path: path + [key], container: nil)) : nil
        }
        guard let decoder = try? container?.superDecoder(forKey: key) else { return nil }
        return (try? ConfigurationSection<Keys>(decoder)).map(body)
    }

    /// Reads the section at `key`; `settings` keep their values when it is absent or not usable.
    func read<S: ConfigurationSettings>(_ settings: inout S, _ key: Key, evenIfAbsent: Bool = false) {
        settings = section(key, S.CodingKeys.self, evenIfAbsent: evenIfAbsent, S.init(reading:)) ?? settings
    }

    /// Reads a section that `null` turns off.
    func readOrNull<S: ConfigurationSettings>(_ settings: inout S?, _ key: Key) {
        settings = isNull(key) ? nil : section(key, S.CodingKeys.self, S.init(reading:)) ?? settings
    }

    private func wrongType<T>(_ type: T.Type, _ key: Key, found node: Node?, example: String?) -> (String, String) {
        let found = node.map { $0.scalar?.string ?? ($0.sequence != nil ? "a list" : "a section") } ?? ""
        let such = example.map { " such as \($0)" } ?? ""
        return switch type {
        case is String.Type: ("'\(name(key))' must be text", "write a single value after '\(name(key)):'")
        case is Int.Type: ("'\(name(key))' must be a whole number, not '\(found)'", "write a number\(such)")
        case is Double.Type: ("'\(name(key))' must be a number, not '\(found)'", "write a number\(such)")
        case is Bool.Type: ("'\(name(key))' must be true or false, not '\(found)'", "write true or false")
        default: ("'\(name(key))' must be a list, not '\(found)'", "write a list\(such)")
        }
    }

    /// The fix for a value whose check has none of its own.
    private static var anyFix: String { "compare with Config/homegate.yml, which documents every key" }

    /// A value as the config file writes it.
    private static func yaml(_ value: Any) -> String {
        switch value {
        case let list as [String]: "[\(list.joined(separator: ", "))]"
        case let number as Double where number == number.rounded() && abs(number) < 1e15: "\(Int(number))"
        default: "\(value)"
        }
    }
}

/// What a check says of a value that `validate` refuses: the message of the error it throws.
func problem<T>(_ validate: (T) throws -> Void, _ value: T) -> String? {
    do {
        try validate(value)
        return nil
    } catch let error as any ExplainedError {
        return error.message
    } catch {
        return "\(error)"
    }
}

/// An error with a message for people beside its code.
protocol ExplainedError: Error { var message: String { get } }

extension ConfigurationDecoding {
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
