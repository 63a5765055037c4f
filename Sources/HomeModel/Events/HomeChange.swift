/// A change of the model with the state it left behind, taken when it was committed: a listener
/// (the gateway's publisher) renders from it without asking the manager again, and sees each change
/// exactly as it was, even when it is behind.
package struct HomeChange: Sendable {
    package let event: HomeEvent
    /// The homes after the change. For a value or a reachability change: only the accessory's home,
    /// cut down to that accessory.
    package let homes: [Home]
    /// The accessories no home has yet, after the change; nil for a value or a reachability change,
    /// which cannot change them.
    package let discovered: [Accessory]?
    /// The model's version after the change: every change counts one, and a snapshot taken at
    /// version `v` (``HomeManager/state()``) holds every change up to `v`.
    package let version: UInt64
}
