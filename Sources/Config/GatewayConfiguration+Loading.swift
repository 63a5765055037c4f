import Foundation
import HomeModel
import MQTT
import Yams

extension GatewayConfiguration {
    /// Reads the config file at `file`, applies the overrides from `environment` and checks every
    /// value. Throws all the problems found together, each with its line and column and a fix.
    package static func load(
        file: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ConfigurationErrors) -> GatewayConfiguration {
        let yaml = try ConfigurationErrors.text(
            of: file, "the config file", fix: "copy Config/homegate.yml there, or pass the right path with --config")
        return try parse(yaml: yaml, file: file, environment: environment)
    }

    /// Reads config text as `load` does; `file` names it in the problems and anchors relative paths
    /// nowhere (paths are taken as written).
    package static func parse(
        yaml: String, file: String, environment: [String: String] = [:]
    ) throws(ConfigurationErrors) -> GatewayConfiguration {
        let root = try compose(yaml, file: file)
        let decoding = ConfigurationDecoding(
            file: file, root: root ?? Node("", Tag(.null)), environment: environment)
        var configuration: GatewayConfiguration?
        do {
            configuration = try YAMLDecoder().decode(
                GatewayConfiguration.self, from: decoding.root, userInfo: [ConfigurationDecoding.key: decoding])
        } catch  where decoding.problems.isEmpty {
            decoding.report(.syntax, at: .wholeFile(file), "\(error)", fix: "compare with Config/homegate.yml")
        } catch {}
        guard let configuration, decoding.problems.isEmpty else {
            let byLine = decoding.problems.enumerated().sorted {
                ($0.element.location.line ?? .max, $0.offset) < ($1.element.location.line ?? .max, $1.offset)
            }
            throw ConfigurationErrors(byLine.map(\.element))
        }
        return configuration
    }

    /// The YAML of `file` (the demo-home file too); one Yams cannot read is refused where Yams says.
    static func compose(_ yaml: String, file: String) throws(ConfigurationErrors) -> Node? {
        do {
            return try Yams.compose(yaml: yaml)
        } catch {
            throw ConfigurationErrors([syntaxError(error, file: file)])
        }
    }

    private static func syntaxError(_ error: any Error, file: String) -> ConfigurationError {
        let fix =
            "check the indentation and quoting at that place (quote values that contain ': ' or start with '{', '[', '*', '&' or '#')"
        guard let error = error as? YamlError else {
            return ConfigurationError(.syntax, at: .wholeFile(file), "\(error)", fix: fix)
        }
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let message = context.map { "\(problem) (\($0.text) at line \($0.mark.line))" } ?? problem
            return ConfigurationError(
                .syntax, at: .file(file, line: mark.line, column: mark.column), "invalid YAML: \(message)", fix: fix)
        case .duplicatedKeysInMapping(let duplicates, let context):
            return ConfigurationError(
                .syntax, at: .file(file, line: context.mark.line, column: context.mark.column),
                "the key(s) \(duplicates.map { "'\($0)'" }.joined(separator: ", ")) appear more than once in one section",
                fix: "keep one of each; the gateway would not know which one you meant")
        case .reader(let problem, _, _, _):
            return ConfigurationError(
                .syntax, at: .wholeFile(file), "invalid YAML: \(problem)", fix: "save it as UTF-8 text")
        default:
            return ConfigurationError(.syntax, at: .wholeFile(file), "invalid YAML: \(error)", fix: fix)
        }
    }

    /// `host:port` or `[v6]:port` split, or nil when it is neither.
    static func hostAndPort(_ listen: String) -> (String, Int)? {
        let host: Substring
        let portText: Substring
        if listen.hasPrefix("["), let close = listen.firstIndex(of: "]") {
            host = listen[listen.index(after: listen.startIndex)..<close]
            let rest = listen[listen.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = listen.lastIndex(of: ":") else { return nil }
            host = listen[..<colon]
            portText = listen[listen.index(after: colon)...]
            guard !host.contains(":") else { return nil }
        }
        guard !host.isEmpty, !host.contains(where: \.isWhitespace), let port = Int(portText),
            (0...65_535).contains(port)
        else { return nil }
        return (String(host), port)
    }
}

extension MQTTError: ExplainedError {}
extension CodedError: ExplainedError {}
