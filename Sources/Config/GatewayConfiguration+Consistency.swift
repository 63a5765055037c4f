import Foundation
import Gateway
import VirtualDevices
import Yams

extension GatewayConfiguration {
    /// Settings that are each valid but together would lock the homes' administrators out of the
    /// broker or let one account act as another: refused before the gateway starts.
    ///
    /// - `access.dynamicSecurity.enabled` without `mqtt.username`: the gateway could not manage the
    ///   plugin, so no member would get any rights.
    /// - `homeAssistant.account` or `commands.defaultAccount` equal to the gateway's own account:
    ///   Home Assistant or every account-less command would act with the gateway's rights.
    /// - a demo home that makes the gateway's own account a member of a home.
    ///
    /// - Parameters:
    ///   - yaml: the config file's text, to point at the lines of the keys involved.
    package func consistencyProblems(file: String, yaml: String?, demoHome: DemoHome?) -> [ConfigurationError] {
        let root = yaml.flatMap { try? Yams.compose(yaml: $0) }
        var problems: [ConfigurationError] = []
        func report(_ keys: [String], _ message: String, fix: String) {
            problems.append(
                ConfigurationError(
                    .invalidValue, at: .of(keys.map { PathKey($0) }, in: root, file: file), message, fix: fix))
        }
        let gateway = mqtt.username
        if access.dynamicSecurity && gateway == nil {
            report(
                ["access", "dynamicSecurity", "enabled"],
                "dynamic security is on but the gateway connects without 'mqtt.username', so it cannot give any member its rights",
                fix: "set 'mqtt.username' (and its password) to an account with the plugin's admin role")
        }
        if let gateway, homeAssistant.enabled, homeAssistant.account == gateway {
            report(
                ["homeAssistant", "account"],
                "'homeAssistant.account' is the gateway's own account '\(gateway)': Home Assistant would act with the gateway's rights",
                fix: "give Home Assistant an account of its own, e.g. homeassistant")
        }
        if let gateway, commands.defaultAccount == gateway {
            report(
                ["commands", "defaultAccount"],
                "'commands.defaultAccount' is the gateway's own account '\(gateway)': every command without an account would act with the gateway's rights",
                fix: "name a member of the home, or null")
        }
        if let gateway, let demoHome {
            for home in demoHome.homes
            where home.administrator.account == gateway
                || (home.guests ?? []).contains(where: { $0.account == gateway })
            {
                report(
                    ["accessories", "virtual"],
                    "the demo home makes the gateway's own account '\(gateway)' a member of '\(home.name)'",
                    fix: "give the members accounts of their own; the gateway's account is only the gateway's")
            }
        }
        return problems
    }
}
