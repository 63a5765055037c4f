import Foundation
import Gateway

/// One problem with the configuration: where it is, what is wrong, and how to fix it. Rendered the
/// way compilers report errors (`FILE:LINE:COLUMN: error: MESSAGE`), so editors can jump to it.
package struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    package enum Code: String, Sendable, Hashable {
        /// The config file does not exist or cannot be read.
        case missingFile
        /// The file is not valid YAML.
        case syntax
        /// A key the gateway does not know (often a typo).
        case unknownKey
        /// A value of the wrong kind: text where a number belongs, a list where a section belongs.
        case wrongType
        /// A value of the right kind that the gateway cannot work with.
        case invalidValue
        /// A file the configuration names (password, TLS, devices) cannot be read.
        case unreadableFile
    }

    /// Where a problem is: a place in the config file, the file as a whole, or an environment variable.
    package enum Location: Sendable, Hashable, CustomStringConvertible {
        /// Line and column count from 1.
        case file(String, line: Int, column: Int)
        case wholeFile(String)
        case environment(String)

        package var description: String {
            switch self {
            case .file(let path, let line, let column): "\(path):\(line):\(column)"
            case .wholeFile(let path): path
            case .environment(let variable): "$\(variable)"
            }
        }

        /// The line in the file, if the problem has one.
        package var line: Int? {
            if case .file(_, let line, _) = self { line } else { nil }
        }
    }

    package let code: Code
    package let location: Location
    package let message: String
    /// What the user can do about it.
    package let fix: String

    package init(_ code: Code, at location: Location, _ message: String, fix: String) {
        self.code = code
        self.location = location
        self.message = message
        self.fix = fix
    }

    /// `LOCATION: error: MESSAGE` and an indented `fix:` line.
    package var description: String {
        "\(location): error: \(message)\n    fix: \(fix)"
    }
}

/// Every problem found in one configuration, in the order of the file (environment variables last). Loading reports them all at
/// once, so a user fixes a config in one round rather than one error per run.
package struct ConfigurationErrors: Error, Sendable, Hashable, CustomStringConvertible {
    package let errors: [ConfigurationError]

    package init(_ errors: [ConfigurationError]) {
        self.errors = errors
    }

    /// The UTF-8 text of the file at `file`, or why it cannot be had: `what` names the file in the
    /// problem ("the config file"), and `fix` says what to do when it does not exist.
    static func text(of file: String, _ what: String, fix: String) throws(ConfigurationErrors) -> String {
        guard let data = FileManager.default.contents(atPath: file) else {
            let exists = FileManager.default.fileExists(atPath: file)
            throw ConfigurationErrors([
                ConfigurationError(
                    .missingFile, at: .wholeFile(file), exists ? "\(what) cannot be read" : "\(what) does not exist",
                    fix: exists ? "let the gateway's user read it (chmod/chown)" : fix)
            ])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationErrors([
                ConfigurationError(.syntax, at: .wholeFile(file), "\(what) is not UTF-8 text", fix: "save it as UTF-8")
            ])
        }
        return text
    }

    /// One rendered problem after another, each on its own lines.
    package var description: String {
        errors.map(\.description).joined(separator: "\n")
    }
}
