import HomeModel

/// The topic tree of some homes as indented text, one level per line: what the gateway publishes
/// (retained or not) and where each command and request goes. For `homegate topics`.
package struct TopicTree: Sendable {
    package let lines: [String]

    package init(homes: [Home], topics: Topics) {
        var entries: [String: String] = [
            topics.status: "retained: online / offline",
            topics.health: "retained: health JSON",
            topics.managerEvents: "events",
            topics.response(account: "<account>"): "answers",
            "\(topics.base)/$request/<account>/<operation>": "requests",
        ]
        for topic in RetainedView(homes: homes, discovered: [], topics: topics).topics {
            entries[topic] = "retained"
        }
        for home in homes {
            entries[topics.events(home: home.name)] = "events"
            for actionSet in home.actionSets {
                entries["\(topics.home(home.name))/$actionsets/\(actionSet.name)/$run/<account>"] = "command"
            }
            for accessory in home.accessories {
                let room = Rendering.roomName(accessory.room, in: home)
                let base = topics.accessory(home: home.name, room: room, accessory: accessory.name)
                entries["\(base)/$set/<account>"] = "command: JSON of values"
                entries["\(base)/$identify/<account>"] = "command"
                for service in accessory.services {
                    for characteristic in service.characteristics
                    where characteristic.metadata.permissions.contains(.write) {
                        let value = topics.value(
                            home: home.name, room: room, accessory: accessory.name, service: service.name,
                            characteristic: characteristic.type.rawValue)
                        entries["\(value)/set/<account>"] = "command: \(characteristic.metadata.format.rawValue)"
                    }
                }
            }
        }
        var lines: [String] = []
        var previous: [Substring] = []
        for topic in entries.keys.sorted() {
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            let shared = zip(previous, levels).prefix { $0 == $1 }.count
            for depth in shared..<levels.count {
                let indent = String(repeating: "  ", count: depth)
                let note = depth == levels.count - 1 ? "  (\(entries[topic]!))" : ""
                lines.append("\(indent)\(levels[depth])\(note)")
            }
            previous = levels
        }
        self.lines = lines
    }
}
