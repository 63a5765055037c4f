extension GatewayConfiguration {
    /// `homekit`: the homes served to Apple's Home app, each as a HomeKit bridge (docs/homekit.md).
    package struct HomeKitSettings: Sendable, Hashable {
        package var bridges: [Bridge] = []
        /// Advertise the bridges over mDNS (`_hap._tcp`, through avahi-daemon), so that the Home
        /// app finds them.
        package var advertise = true
        /// The interfaces the adverts go out on; nil: those with a route, never `lo` or `docker0`.
        package var interfaces: [String]?

        package init() {}

        /// One home served as a bridge, with the rights of one account of the home.
        package struct Bridge: Sendable, Hashable {
            /// The home's name.
            package var home = ""
            /// The account whose rights the bridge's controllers have: a guest's bridge cannot do
            /// what the guest cannot.
            package var account = ""
            /// The TCP port controllers connect to.
            package var port = 51827
            /// The address to listen on: every IPv4 interface by default.
            package var listen = "0.0.0.0"
            /// The file's port was refused (reported at its line): no other bridge is said to share it.
            var portIsWrong = false

            package init() {}
        }
    }
}

extension GatewayConfiguration.HomeKitSettings: ConfigurationSettings {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case bridges, advertise, interfaces
    }

    mutating func read(_ file: ConfigurationSection<CodingKeys>) {
        file.read(
            &bridges, .bridges,
            fix: "give each bridge its own home and port, e.g. {home: Main House, account: apple-home, port: 51827}"
        ) { bridges in
            if let port = Self.firstRepeat(bridges.filter { !$0.portIsWrong }.map(\.port)) {
                return "two HomeKit bridges listen on port \(port)"
            }
            if let home = Self.firstRepeat(bridges.map { $0.home.lowercased() }) {
                return "the home '\(home)' is served by two HomeKit bridges"
            }
            return nil
        }
        file.read(&advertise, .advertise)
        guard !file.isNull(.interfaces) else { return }
        interfaces = file.list(
            .interfaces, example: ["eth0", "wlan0"], fix: "name the hub's network interfaces, e.g. [eth0]"
        ) {
            $0.isEmpty ? "an interface name in 'homekit.interfaces' is empty" : nil
        }
    }

    private static func firstRepeat<T: Hashable>(_ values: [T]) -> T? {
        var seen: Set<T> = []
        return values.first { !seen.insert($0).inserted }
    }
}

extension GatewayConfiguration.HomeKitSettings.Bridge: Decodable {
    enum CodingKeys: String, CodingKey, CaseIterable {
        case home, account, port, listen
    }

    package init(from decoder: any Decoder) throws {
        self.init()
        let file = try ConfigurationSection<CodingKeys>(decoder)
        for key in [CodingKeys.home, .account] where !file.contains(key) {
            file.report(
                .invalidValue, at: key, "a HomeKit bridge needs its '\(key.stringValue)'",
                fix: "write e.g. {home: Main House, account: apple-home, port: 51827}")
        }
        file.read(&home, .home, fix: "name a home of the hub") { $0.isEmpty ? "'home' is empty" : nil }
        file.read(&account, .account, fix: "name an account that is a member of the home") {
            $0.isEmpty ? "'account' is empty" : nil
        }
        if file.contains(.port) {
            let given: Int? = file.value(.port, fix: "use a free TCP port, e.g. 51827") {
                (1...65535).contains($0) ? nil : "'port' is \($0); it must be 1...65535"
            }
            port = given ?? port
            portIsWrong = given == nil
        }
        file.read(&listen, .listen, fix: "use 0.0.0.0 (every interface) or one of the hub's addresses") {
            $0.isEmpty ? "'listen' is empty" : nil
        }
    }
}
