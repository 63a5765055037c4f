import Testing

@testable import Zigbee2MQTT

/// Which of zigbee2mqtt's topics a received topic is: the bridge's own, a device's state or
/// availability (friendly names may hold `/`), or one the driver does not read (its own commands).
struct TopicRouteTests {
    typealias Route = Zigbee2MQTTTopics.Route

    @Test(
        "each topic under the base topic is routed by its levels",
        arguments: [
            ("zigbee2mqtt/bridge/devices", Route.devices),
            ("zigbee2mqtt/bridge/groups", Route.groups),
            ("zigbee2mqtt/bridge/state", .bridgeState),
            ("zigbee2mqtt/bridge/event", .event),
            ("zigbee2mqtt/bridge/logging", .logging),
            ("zigbee2mqtt/bridge/response/permit_join", .permitJoinResponse),
            ("zigbee2mqtt/sensor_000", .device("sensor_000")),
            ("zigbee2mqtt/Living Room/Lamp", .device("Living Room/Lamp")),
            ("zigbee2mqtt/sunset/reset/getter", .device("sunset/reset/getter")),
            ("zigbee2mqtt/set", .device("set")),
            ("zigbee2mqtt/set/lamp", .device("set/lamp")),
            ("zigbee2mqtt/Küche/Lampe", .device("Küche/Lampe")),
            ("zigbee2mqtt/sensor_000/availability", .availability("sensor_000")),
            ("zigbee2mqtt/Living Room/Lamp/availability", .availability("Living Room/Lamp")),
            ("zigbee2mqtt/lamp/availabilityx", .device("lamp/availabilityx")),
            ("zigbee2mqtt/", .device("")),
        ])
    func routed(topic: String, route: Route) {
        #expect(Zigbee2MQTTTopics(base: "zigbee2mqtt").route(topic) == route)
    }

    @Test(
        "the driver's own commands, other bridge topics and other base topics are not read",
        arguments: [
            "zigbee2mqtt/lamp/set", "zigbee2mqtt/lamp/get", "zigbee2mqtt/lamp/set/brightness",
            "zigbee2mqtt/Living Room/Lamp/get/state", "zigbee2mqtt/bridge/request/permit_join",
            "zigbee2mqtt/bridge/response/device/rename", "zigbee2mqttx/lamp", "zigbee2mqtt", "other/lamp",
            "zigbee", "",
        ])
    func ignored(topic: String) {
        #expect(Zigbee2MQTTTopics(base: "zigbee2mqtt").route(topic) == nil)
    }

    @Test("a base topic of several levels and beyond ASCII")
    func otherBase() {
        let topics = Zigbee2MQTTTopics(base: "hüs/z2m")
        #expect(topics.route("hüs/z2m/lamp") == .device("lamp"))
        #expect(topics.route("hüs/z2m/bridge/state") == .bridgeState)
        #expect(topics.route("hüs/z2mx/lamp") == nil)
        #expect(topics.route("hus/z2m/lamp") == nil)
    }
}
