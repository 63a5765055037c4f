import Foundation
import Testing

@testable import HomeModel

@Suite("States in words")
struct ValueNameTests {
    static let contract = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/mqtt.md")

    @Test("docs/mqtt.md lists the same words for the same numbers as the page shows, for every named type")
    func contractAgrees() throws {
        let text = try String(contentsOf: Self.contract, encoding: .utf8)
        let start = try #require(text.range(of: "## States in words")).upperBound
        let section = text[start...]
        let end = section.range(of: "\n## ")?.lowerBound ?? section.endIndex
        var listed: [CharacteristicType: [Int: String]] = [:]
        for line in section[..<end].split(separator: "\n") {
            guard let row = line.wholeMatch(of: /\| `(\w+)` \| (.*) \|/) else { continue }
            var names: [Int: String] = [:]
            for pair in row.2.split(separator: ", ") {
                let parts = pair.split(separator: " ", maxSplits: 1)
                names[try #require(Int(parts[0]), "\(line)")] = String(parts[1])
            }
            listed[CharacteristicType(String(row.1))] = names
        }
        #expect(Set(listed.keys) == Set(CharacteristicType.valueNames.keys))
        for (type, names) in listed { #expect(CharacteristicType.valueNames[type] == names, "\(type)") }
    }

    @Test("every valid value of the standard metadata has a name")
    func standardStatesNamed() {
        for type in CharacteristicType.valueNames.keys {
            guard let values = CharacteristicMetadata.standard(for: type)?.validValues else { continue }
            for value in values { #expect(type.name(of: value) != nil, "\(type) \(value)") }
        }
    }
}
