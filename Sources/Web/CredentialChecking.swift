import Logging
import MQTT

/// What the broker said of an account and password.
package enum CredentialCheck: Sendable, Equatable {
    case accepted
    /// Wrong account or password (the broker refused the connection).
    case refused
    /// The broker could not be asked, or does not check passwords: no one may log in.
    case unavailable(String)
}

/// Checks an account's password. The web page has no accounts of its own: the broker is the one
/// source of identities.
package protocol CredentialChecking: Sendable {
    func check(account: String, password: String) async -> CredentialCheck
}

/// Checks a password by connecting to the gateway's broker as the account (same address and TLS),
/// then disconnecting. A broker that also accepts a made-up password for the account does not check
/// passwords, so the login is refused: otherwise anyone could log in as anyone.
package struct BrokerCredentials: CredentialChecking {
    private let configuration: MQTTConfiguration
    private let logger: Logger

    /// - Parameter configuration: the gateway's own client settings; the account, password and
    ///   client id are replaced for each check.
    package init(configuration: MQTTConfiguration, logger: Logger) {
        var configuration = configuration
        configuration.will = nil
        configuration.retryInitialConnection = false
        configuration.cleanSession = true
        self.configuration = configuration
        self.logger = logger
    }

    package func check(account: String, password: String) async -> CredentialCheck {
        switch await connect(account: account, password: password) {
        case .accepted:
            // A broker without a password file lets every password in.
            if await connect(account: account, password: "not-" + randomToken()) == .accepted {
                logger.error(
                    "web login refused: the broker accepts any password; the web page needs a broker that checks passwords (password_file)",
                    metadata: ["account": "\(printable(account))"])
                return .unavailable("The broker does not check passwords, so the page cannot either.")
            }
            return .accepted
        case let other:
            return other
        }
    }

    private func connect(account: String, password: String) async -> CredentialCheck {
        var configuration = configuration
        configuration.username = account
        configuration.password = password
        configuration.clientID = "homegate-web-\(randomToken().prefix(12))"
        var quiet = logger
        quiet.logLevel = .critical
        do {
            let client = try MQTTClient(configuration, logger: quiet)
            do {
                try await client.connect()
                await client.disconnect()
                return .accepted
            } catch let error as MQTTError where error.code == .badCredentials || error.code == .notAuthorized {
                await client.disconnect()
                return .refused
            } catch {
                await client.disconnect()
                // The reason goes to the log; a visitor who is not logged in learns only that.
                logger.warning("web login: could not reach the broker", metadata: ["error": "\(error)"])
                return .unavailable("The broker cannot be reached; the hub's log says why.")
            }
        } catch {
            logger.warning("web login: could not make a client", metadata: ["error": "\(error)"])
            return .unavailable("The broker cannot be reached; the hub's log says why.")
        }
    }
}

/// An account name as it may go into a log line: control characters shown as `?`, at most 64
/// characters (a login form's account is anything a visitor typed).
func printable(_ account: String) -> String {
    let shown = String(
        account.unicodeScalars.prefix(64).map { $0.properties.generalCategory == .control ? "?" : Character($0) })
    return account.unicodeScalars.count > 64 ? shown + "…" : shown
}
