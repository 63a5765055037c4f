import Foundation
import JSON
import Testing

@testable import HomeKitBridge

struct ConfigurationNumberTests {
    @Test("c# moves only when the database's content does, survives storing, and wraps from 65535 to 1")
    func moves() throws {
        var number = ConfigurationNumber()
        #expect(!number.update(content: Array("one".utf8)) && number.value == 1)
        #expect(!number.update(content: Array("one".utf8)) && number.value == 1)
        #expect(number.update(content: Array("two".utf8)) && number.value == 2)
        var restored = try #require(ConfigurationNumber(json: try JSON.parse(number.json.bytes)))
        #expect(!restored.update(content: Array("two".utf8)) && restored.value == 2)
        for index in 3...65535 { _ = restored.update(content: Array("\(index)".utf8)) }
        #expect(restored.value == 65535)
        #expect(restored.update(content: Array("wrap".utf8)) && restored.value == 1)
    }
}
