import AsyncMailbox
import Foundation
import TestSupport
import Testing

@testable import HomeModel

/// A press is an event, not a state: every one is passed on, none is kept in the model or the file.
@Suite("Button presses", .timeLimit(.minutes(5)))
struct ButtonEventTests {
    /// One button, found with its last press (old news).
    static let button = ReportingDriver.button(press: .int(2))

    @Test("the same press twice is two events; the model, a layout save and the file keep no press")
    func pressesAreEvents() async throws {
        try await withTemporaryDirectory { directory in
            let path = "\(directory)/home.sqlite"
            let manager = try HomeManager(database: HomeDatabase.open(atPath: path), clock: ManualClock())
            let button = ReportingDriver(Self.button)
            try await manager.attach(button)
            try await manager.edit(.addHome(name: "Home"), account: "alice")
            try await manager.edit(.addAccessory(home: "Home", id: "button"), account: "alice")
            let events = await manager.events()
            var iterator = events.makeAsyncIterator()

            // When it is found again with its last press, then pressed once, twice, and held
            button.send(.found(Self.button))
            for event in [0, 0, 2] {
                button.send(.value("button", service: "button", characteristic: .programmableSwitchEvent, .int(event)))
            }

            // Then three presses come, in order, and nothing for being found
            var presses: [Int] = []
            while presses.count < 3, let event = await iterator.next() {
                if case .didUpdateValueForCharacteristic(_, _, _, .programmableSwitchEvent, let value) = event {
                    presses.append(value.intValue ?? -1)
                }
            }
            #expect(presses == [0, 0, 2])
            func press(in home: Home?) -> CharacteristicValue? {
                home?.accessory("button")?.service("button")?.characteristic(.programmableSwitchEvent)?.value
            }
            #expect(press(in: try await manager.home("Home", account: "alice")) == nil)
            // A read has no press to read: left out of a whole accessory's, refused when named
            #expect(try await manager.readValues(accessory: "Button", home: "Home", account: "alice").isEmpty)
            #expect(
                await errorCode {
                    _ = try await manager.readValues(
                        accessory: "Button", characteristic: .programmableSwitchEvent, home: "Home", account: "alice")
                } == .notSupported)
            try await manager.edit(.addRoom(home: "Home", name: "Hall"), account: "alice")
            await manager.shutdown()
            #expect(press(in: try HomeDatabase.open(atPath: path).load().homes.first) == nil)
        }
    }
}
