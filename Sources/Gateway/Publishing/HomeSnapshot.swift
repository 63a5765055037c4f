import HomeModel

/// What the publisher renders from: all homes and the accessories no home has yet.
package struct HomeSnapshot: Sendable {
    package var homes: [Home]
    package var discovered: [Accessory]
    /// The model's version it shows (``HomeChange/version``); nil when not read from the manager.
    package var version: UInt64?
}

extension HomeSnapshot {
    package init(of manager: HomeManager) async {
        (homes, discovered, version) = await manager.state()
    }
}
