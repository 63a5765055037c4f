import Foundation
import Testing
import Yams

@testable import Accessories

/// `DemoHome.fastDecode` must read a demo home exactly as Yams' `Codable` decoder with its default
/// rules did before it, and give the decoder everything else.
@Suite struct DemoHomeFastDecodingTests {
    static let demoFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Config/demo-home.yml")

    /// What the decoder with Yams' default rules makes of `yaml`: the reading before the fast path.
    static func decoded(_ yaml: String) throws -> DemoHome {
        try YAMLDecoder().decode(DemoHome.self, from: yaml)
    }

    static func fast(_ yaml: String) throws -> DemoHome? {
        try Yams.compose(yaml: yaml, .basic).flatMap(DemoHome.fastDecode)
    }

    /// What `DemoHome.decode` falls back to when the fast path gives up: the decoder on the same
    /// tree, its plain scalars tagged by `PlainScalarTags`.
    static func fallback(_ yaml: String) throws -> DemoHome {
        let root = try #require(try Yams.compose(yaml: yaml, .basic))
        return try YAMLDecoder().decode(DemoHome.self, from: PlainScalarTags.retag(root))
    }

    @Test func theDemoHomeIsReadFastAndTheSame() throws {
        let yaml = try String(contentsOf: Self.demoFile, encoding: .utf8)
        let fast = try #require(try Self.fast(yaml))
        #expect(fast == (try Self.decoded(yaml)))
        #expect(fast == (try Self.fallback(yaml)))
    }

    /// Every field of a device, and values of every kind spelled in the ways YAML allows.
    static let everyField = """
        devices:
          - id: lamp
            name: 123
            kind: lightbulb
            manufacturer: 'Acme'
            model: "M 1"
            writeDelay: 0.5
            failureRate: 1
            reachable: no
            battery: 0x1F
            transitionTime: 1_000
            jammed: On
            obstructed: FALSE
            bridged:
              - { id: inner, name: "true", kind: switch, writeDelay: .5, transitionTime: 1:30 }
          - { id: 'plain', name: yes sir, kind: fan, battery: 017, failureRate: 0.25 }
        homes:
          - name: Home
            primary: true
            administrator: { account: alice, name: Alice, extra: ignored }
            guests: [{ account: bob, name: "Bob" }]
            rooms: [Kitchen, 'Living Room', 42]
            zones: [{ name: Downstairs, rooms: [Kitchen] }]
            accessories:
              - { id: lamp, room: Kitchen, name: Reading Lamp }
              - { id: plain }
            actionSets:
              - name: Evening
                actions:
                  - { accessory: lamp, service: Lightbulb, characteristic: on, value: true }
                  - { accessory: lamp, service: Lightbulb, characteristic: brightness, value: 42 }
                  - { accessory: lamp, service: Lightbulb, characteristic: hue, value: 21.5 }
                  - { accessory: lamp, service: Lightbulb, characteristic: name, value: "on" }
                  - { accessory: lamp, service: Lightbulb, characteristic: name, value: plain words }
                  - { accessory: lamp, service: Lightbulb, characteristic: brightness, value: 0x1F }
                  - { accessory: lamp, service: Lightbulb, characteristic: brightness, value: 1_000 }
                  - { accessory: lamp, service: Lightbulb, characteristic: hue, value: .5 }
                  - { accessory: lamp, service: Lightbulb, characteristic: on, value: Off }
                  - { accessory: lamp, service: Lightbulb, characteristic: name, value: '7' }
                  - { accessory: lamp, service: Lightbulb, characteristic: name, value: !!str 7 }
        other: [ignored]
        """

    @Test func everyFieldIsReadAsTheDecoderReadsIt() throws {
        let fast = try #require(try Self.fast(Self.everyField))
        let decoded = try Self.decoded(Self.everyField)
        #expect(fast == decoded)
        #expect(fast == (try Self.fallback(Self.everyField)))
        // And the values are the ones the file means, not merely equal to each other.
        #expect(fast.devices[0].name == "123")
        #expect(fast.devices[0].battery == 31)
        #expect(fast.devices[0].isReachable == false)
        #expect(fast.devices[0].isJammed)
        #expect(fast.devices[0].bridged[0].name == "true")
        #expect(fast.devices[0].bridged[0].transitionTime == .seconds(90))
        #expect(fast.devices[1].battery == 15)
        let values = fast.homes[0].actionSets?[0].actions.map(\.value.value)
        #expect(
            values == [
                .bool(true), .int(42), .float(21.5), .string("on"), .string("plain words"), .int(31), .int(1000),
                .float(0.5), .bool(false), .string("7"), .int(7),
            ])
    }

    /// A value `Bool.construct` takes but YAML's rules do not: the decoder with its default rules, the
    /// fast path and the fallback (which runs when something else in the file makes the fast path
    /// give up) all read it as a boolean.
    @Test func aMixedCaseBooleanInAnAction() throws {
        let yaml = """
            devices: [{ id: a, name: A, kind: lightbulb }]
            homes: [{ name: H, administrator: { account: o, name: O }, actionSets: [{ name: S, actions: [
              { accessory: a, service: Lightbulb, characteristic: on, value: tRUE }] }] }]
            """
        let fast = try #require(try Self.fast(yaml))
        #expect(fast == (try Self.decoded(yaml)))
        #expect(fast.homes[0].actionSets?[0].actions[0].value.value == .bool(true))
        #expect(fast == (try Self.fallback(yaml)))
    }

    @Test func anAliasReadsAsWhatItNames() throws {
        let yaml = "devices: [{ id: &x a, name: *x, kind: fan }]\nhomes: []"
        let fast = try #require(try Self.fast(yaml))
        #expect(fast == (try Self.decoded(yaml)))
        #expect(fast.devices[0].name == "a")
    }

    /// Files the fast path leaves to the decoder: each reads as it did (or fails as it did).
    @Test(arguments: [
        // A null value: the decoder reads an absent model.
        "devices: [{ id: a, name: A, kind: fan, model: ~ }]\nhomes: []",
        // An explicit tag.
        "devices: [{ id: a, name: A, kind: fan, battery: !!int 5 }]\nhomes: []",
        // A null spelled as a string: nil to the decoder's `decodeIfPresent`.
        "devices: [{ id: a, name: A, kind: fan, model: !!str null }]\nhomes: []",

        // Problems the decoder names.
        "devices: [{ id: a, name: A, kind: toaster }]\nhomes: []",
        "devices: [{ id: a, kind: fan }]\nhomes: []",
        "devices: [{ id: a, name: A, kind: fan, battery: many }]\nhomes: []",
        "devices: [{ id: a, name: A, kind: fan, failureRate: 2 }]\nhomes: []",
        // Durations a `Duration` cannot hold trapped (found by fuzz-config), and negative ones.
        "devices: [{ id: a, name: A, kind: fan, writeDelay: 07777777777777777777777777777777777777777777777.5 }]\nhomes: []",
        "devices: [{ id: a, name: A, kind: fan, transitionTime: 1e300 }]\nhomes: []",
        "devices: [{ id: a, name: A, kind: fan, writeDelay: .nan }]\nhomes: []",
        "devices: [{ id: a, name: A, kind: fan, writeDelay: -1 }]\nhomes: []",
        "devices: [{ id: a, name: A, kind: fan, reachable: 'yes' }]\nhomes: []",
        "devices: { id: a }\nhomes: []",
        "devices: []",
        "homes: [{ name: H, administrator: { account: a } }]\ndevices: []",
    ])
    func theRestIsLeftToTheDecoder(yaml: String) throws {
        #expect(try Self.fast(yaml) == nil)
        let before = Result { try Self.decoded(yaml) }.map { $0 }
        let now = Result { try DemoHome.parse(yaml) }
        switch (before, now) {
        case (.success(let a), .success(let b)): #expect(a == b)
        case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)")
        default: Issue.record("before: \(before), now: \(now)")
        }
    }
}
