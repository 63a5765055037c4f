import Config
import Gateway
import HomeModel
import Testing

@Suite("Topic mapping")
struct TopicsTests {
    let topics = Topics(base: "homegate")

    @Test("published topics follow the contract (docs/mqtt.md)")
    func published() {
        #expect(topics.status == "homegate/$status")
        #expect(topics.layout(home: "Main House") == "homegate/Main House/$layout")
        #expect(
            topics.value(home: "Main House", room: "Kitchen", accessory: "Lamp", service: "Light", characteristic: "On")
                == "homegate/Main House/Kitchen/Lamp/Light/On")
        #expect(topics.reachable(home: "H", room: "$default", accessory: "A") == "homegate/H/$default/A/$reachable")
        #expect(topics.response(account: "guest") == "homegate/$response/guest")
    }

    @Test("topics are joined and split byte for byte, under a base of several levels and beyond ASCII")
    func bytes() throws {
        let nested = Topics(base: "site/hg")
        #expect(
            nested.state(home: "Maison", room: "Cuisine é", accessory: "Lampe 🙂")
                == "site/hg/Maison/Cuisine é/Lampe 🙂/$state")
        #expect(nested.events(home: "H") == "site/hg/H/$events")
        #expect(nested.accessory(home: "H", room: "R", accessory: "A") == "site/hg/H/R/A")
        #expect(nested.homeAssistantState(home: "H", room: "R", accessory: "A", service: "S") == "site/hg/H/R/A/S/$ha")
        #expect(Topics(base: "").events(home: "H") == "/H/$events")

        #expect(
            try nested.parse("site/hg/Maison/Cuisine é/Lampe 🙂/Light/On/set/guest")
                == .setCharacteristic(
                    AccessoryPath(home: "Maison", room: "Cuisine é", accessory: "Lampe 🙂"), service: "Light",
                    characteristic: "On", account: "guest"))
        for elsewhere in ["site/hg", "site/hgX/H/R/A/$identify", "site/h/H/R/A/$identify", "site", ""] {
            #expect(try nested.parse(elsewhere) == nil, "\(elsewhere)")
        }
        #expect(throws: TopicError.self) { try nested.parse("site/hg/H/R/A/S/C/set/guest/extra") }
    }

    @Test(
        "command topics are read with and without the account",
        arguments: [
            (
                "homegate/Main House/Kitchen/Lamp/Light/On/set/guest",
                CommandTopic.setCharacteristic(
                    AccessoryPath(home: "Main House", room: "Kitchen", accessory: "Lamp"), service: "Light",
                    characteristic: "On", account: "guest")
            ),
            (
                "homegate/H/R/A/S/C/set",
                CommandTopic.setCharacteristic(
                    AccessoryPath(home: "H", room: "R", accessory: "A"), service: "S", characteristic: "C", account: nil
                )
            ),
            (
                "homegate/H/R/A/$set/owner",
                .setAccessory(AccessoryPath(home: "H", room: "R", accessory: "A"), account: "owner")
            ),
            (
                "homegate/H/$default/A/$identify",
                .identify(AccessoryPath(home: "H", room: "$default", accessory: "A"), account: nil)
            ),
            (
                "homegate/H/$actionsets/Good Night/$run/guest",
                .runActionSet(home: "H", actionSet: "Good Night", account: "guest")
            ),
            ("homegate/$request/owner/addRoom", .request(account: "owner", operation: "addRoom")),
        ])
    func commands(topic: String, expected: CommandTopic) throws {
        #expect(try topics.parse(topic) == expected)
    }

    @Test(
        "the gateway's own topics and foreign topics are not commands",
        arguments: [
            "homegate/$status", "homegate/H/$layout", "homegate/H/R/A/S/C", "homegate/H/R/A/$state",
            "other/H/R/A/S/C/set", "homegate", "homegateX/H/R/A/S/C/set",
        ])
    func notCommands(topic: String) throws {
        #expect(try topics.parse(topic) == nil)
    }

    @Test(
        "malformed command topics are refused with a reason",
        arguments: [
            ("homegate/$request/owner", "request topic"),
            ("homegate/$request/owner/addRoom/extra", "request topic"),
            ("homegate/H/R/A/S/C/set/guest/extra", "too many"),
            ("homegate/H//A/S/C/set", "room level is empty"),
            ("homegate/H/R/A/$set/gu\u{1}est", "control character"),
            ("homegate/H/R/La\u{7F}mp/S/C/set", "control character"),
            ("homegate/Küche/R/La\u{85}mpe/S/C/set", "control character"),
            ("homegate/H/R/A/S/C/set/gu+est", "wildcard"),
            ("homegate/Küche/R/Lämpe #2/S/C/set", "wildcard"),
        ])
    func malformed(topic: String, reason: String) {
        #expect {
            try topics.parse(topic)
        } throws: { error in
            (error as? TopicError)?.description.contains(reason) ?? false
        }
    }

    @Test("levels end at every '/', as the broker splits them, also before a combining mark")
    func levelsSplitAtEverySlash() throws {
        // "/\u{301}" is one Character; a split by Characters saw "set/\u{301}guest" as one level and
        // left unanswered a command that the broker delivers under "homegate/+/+/+/+/+/set/+".
        #expect(
            try topics.parse("homegate/H/R/A/S/C/set/\u{301}guest")
                == .setCharacteristic(
                    AccessoryPath(home: "H", room: "R", accessory: "A"), service: "S", characteristic: "C",
                    account: "\u{301}guest"))
        #expect(
            try topics.parse("homegate/\u{301}H/R/A/S/C/set")
                == .setCharacteristic(
                    AccessoryPath(home: "\u{301}H", room: "R", accessory: "A"), service: "S", characteristic: "C",
                    account: nil))
    }

    @Test("a base topic of several levels works")
    func multiLevelBase() throws {
        let site = Topics(base: "site/hub1")
        #expect(try site.parse("site/hub1/$request/a/homes") == .request(account: "a", operation: "homes"))
        #expect(try site.parse("site/hub2/$request/a/homes") == nil)
    }

    @Test(
        "base topics with wildcards or empty levels are refused",
        arguments: ["", "a/+", "a/#", "/a", "a//b", "a/", "$SYS"])
    func badBase(base: String) {
        #expect(throws: TopicError.self) { try BaseTopic.validate(base) }
    }
}
