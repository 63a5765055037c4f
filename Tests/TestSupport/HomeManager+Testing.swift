import HomeModel

extension HomeManager {
    /// Writes one value (admin or guest): ``HomeManager/writeValues(_:home:account:)`` with one request.
    package func writeValue(
        _ value: CharacteristicValue, to target: CharacteristicReference, home: String, account: String
    ) async throws(HomeError) {
        try await writeValues([ActionRequest(target, value)], home: home, account: account)
    }
}
