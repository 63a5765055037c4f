import HomeModel

/// One accessory whose reports the test makes: a temperature sensor unless told otherwise.
package final class ReportingDriver: AccessoryDriver, Sendable {
    package let name = "reporting"
    package let updates: AsyncStream<DriverUpdate>
    private let accessory: Accessory
    private let sink: AsyncStream<DriverUpdate>.Continuation

    package static let sensor = Accessory(
        id: "sensor", name: "Sensor", category: .sensor,
        services: [
            Service(
                id: "main", type: .temperatureSensor, name: "Temperature",
                characteristics: [.standard(.currentTemperature, .float(20))])
        ])

    /// A button (one StatelessProgrammableSwitch, service id `button`) whose presses the test sends,
    /// found with `press` as its last one.
    package static func button(
        id: AccessoryID = "button", name: String = "Button", press: CharacteristicValue? = nil
    ) -> Accessory {
        Accessory(
            id: id, name: name, category: .programmableSwitch,
            services: [
                Service(
                    id: "button", type: .statelessProgrammableSwitch, name: "Button",
                    characteristics: [.standard(.programmableSwitchEvent, press)])
            ])
    }

    package init(_ accessory: Accessory = sensor) {
        (updates, sink) = AsyncStream.makeStream()
        self.accessory = accessory
    }

    package func send(_ update: DriverUpdate) { sink.yield(update) }

    package func lose() { sink.yield(.lost("sensor")) }

    package func report(_ reading: Double) {
        sink.yield(.value("sensor", service: "main", characteristic: .currentTemperature, .float(reading)))
    }

    package func restore(_ accessories: [Accessory]) async {}
    package func start() async throws {}
    package func stop() async { sink.finish() }
    package func accessories() async -> [Accessory] { [accessory] }
    package func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    { .float(20) }
    package func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {}
    package func identify(_ accessory: AccessoryID) async throws {}
}
