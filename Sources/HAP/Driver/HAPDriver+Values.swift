import HAPModel
import HAPProtocol
import HomeModel
import JSON

/// Reads, writes and identify: the model's requests to a paired device, on its session.
extension HAPDriver {
    package func read(_ accessory: AccessoryID, service: ServiceID, characteristic: CharacteristicType) async throws
        -> CharacteristicValue
    {
        try await read([ValueKey(accessory: accessory, service: service, characteristic: characteristic)])[0]
    }

    /// One `GET /characteristics?id=…` per device (an accessory, or a bridge for all its
    /// accessories) for all the values asked of it, as aiohomekit reads a bridge.
    package func read(_ targets: [ValueKey]) async throws -> [CharacteristicValue] {
        var values = [CharacteristicValue?](repeating: nil, count: targets.count)
        var byDevice: [String: [Int]] = [:]
        for (index, target) in targets.enumerated() {
            byDevice[Self.deviceID(of: target.accessory), default: []].append(index)
        }
        for indices in byDevice.values {
            let first = targets[indices[0]].accessory
            let (connection, database) = try session(for: first)
            let addresses = try indices.map { try database.address(of: targets[$0]) }
            let ids = addresses.map { "\($0.aid).\($0.iid)" }.joined(separator: ",")
            let answer = try await request(connection, .get("/characteristics?id=\(ids)"), first)
            try HAPStatus.check(answer.statusCode, body: answer.body, accessory: Self.deviceID(of: first))
            let read = Dictionary(
                database.values(in: answer.body).map { ($0.address, $0.value) }, uniquingKeysWith: { $1 })
            for (index, address) in zip(indices, addresses) {
                guard let value = read[address] else {
                    throw HomeError(
                        .communicationFailure,
                        "'\(targets[index].accessory)' sent no value for \(targets[index].characteristic).")
                }
                values[index] = value
            }
        }
        return values.map { $0! }
    }

    package func write(_ accessory: AccessoryID, values: [CharacteristicWrite]) async throws {
        let (connection, database) = try session(for: accessory)
        var entries: [JSON] = []
        var timed = false
        for write in values {
            let address = try database.address(
                of: ValueKey(accessory: accessory, service: write.service, characteristic: write.characteristic))
            timed = timed || database.requiresTimedWrite(address)
            entries.append(
                .object([
                    ("aid", .integer(address.aid)), ("iid", .integer(address.iid)),
                    ("value", database.json(write.value, at: address)),
                ]))
        }
        var members: [(key: String, value: JSON)] = [("characteristics", .array(entries))]
        if timed {
            let pid = Int.random(in: 1...Int(UInt32.max))
            let prepare = JSON.object([("ttl", .integer(5_000)), ("pid", .integer(pid))])
            let prepared = try await request(connection, .putJSON("/prepare", prepare.bytes), accessory)
            try HAPStatus.check(prepared.statusCode, body: prepared.body, accessory: accessory.rawValue)
            members.append(("pid", .integer(pid)))
        }
        let answer = try await request(connection, .putJSON("/characteristics", JSON.object(members).bytes), accessory)
        try HAPStatus.check(answer.statusCode, body: answer.body, accessory: accessory.rawValue)
        for write in values {
            sink.yield(.value(accessory, service: write.service, characteristic: write.characteristic, write.value))
        }
    }

    package func identify(_ accessory: AccessoryID) async throws {
        let (_, database) = try session(for: accessory)
        guard let (service, type) = database.identifyCharacteristic(of: accessory) else {
            throw HomeError(.notSupported, "'\(accessory)' cannot identify itself.")
        }
        try await write(
            accessory, values: [CharacteristicWrite(service: service, characteristic: type, value: .bool(true))])
    }

    package nonisolated var reportsConfirmedValues: Bool { true }

    /// Sends `request` on `connection`, its failures as the model's errors.
    func request(_ connection: HAPConnection, _ request: HTTPRequest, _ accessory: AccessoryID) async throws
        -> HTTPMessage
    {
        do {
            return try await connection.send(request)
        } catch let error as HAPError where error.code == .timedOut {
            throw HomeError(.operationTimedOut, "'\(accessory)' did not answer in time.")
        } catch {
            throw HomeError(.communicationFailure, "'\(accessory)': \(error).")
        }
    }
}
