import Yams

/// A step of a coding path made by hand, to point at a place in a YAML document: a mapping's key
/// or a list's index.
struct PathKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) { stringValue = string }
    init(_ index: Int) {
        stringValue = "\(index)"
        intValue = index
    }
    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(intValue) }
}

extension Array where Element == any CodingKey {
    /// `homes[0].administrator` for a coding path.
    var dotted: String {
        reduce(into: "") { text, key in
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
    }
}

extension Node {
    /// The nodes a coding path passes through from this one, each value with the key that names it
    /// in its mapping. It ends where the document does, so its last is the nearest to the path.
    func trail(_ path: [any CodingKey]) -> [(key: Node?, value: Node)] {
        var trail: [(key: Node?, value: Node)] = [(nil, self)]
        for step in path {
            let node = trail[trail.count - 1].value
            if let index = step.intValue, let items = node.sequence, items.indices.contains(index) {
                trail.append((nil, items[index]))
            } else if let pair = node.mapping?.first(where: { $0.key.string == step.stringValue }) {
                trail.append(pair)
            } else {
                break
            }
        }
        return trail
    }

    /// The node's resolved YAML type (`Tag.name` is not public in Yams).
    var kind: Tag.Name { Tag.Name(rawValue: tag.description) }
}

extension ConfigurationError.Location {
    /// Where `path` leads in the document `root` of `file`: the value, or with `key` the key that
    /// names it; as near as the document goes.
    static func of(_ path: [any CodingKey], in root: Node?, file: String, key: Bool = false) -> Self {
        guard let root else { return .wholeFile(file) }
        let trail = root.trail(path)
        let last = trail[trail.count - 1]
        return .of((key && trail.count == path.count + 1 ? last.key?.mark : nil) ?? last.value.mark, file: file)
    }

    static func of(_ mark: Mark?, file: String) -> Self {
        mark.map { .file(file, line: $0.line, column: $0.column) } ?? .wholeFile(file)
    }
}
