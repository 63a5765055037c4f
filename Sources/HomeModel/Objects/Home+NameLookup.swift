extension Home {
    /// The index of the accessory that `name` names under ``HomeName/matches(_:_:)``.
    ///
    /// Commands look accessories up by name on every message; most carry the name exactly as
    /// stored, which a plain comparison finds at memory speed. Names are unique under `matches`, so
    /// an exact hit is the only match, and the full comparison runs only for the rest.
    public func accessoryIndex(named name: String) -> Int? {
        let hash = HomeName.keyHash(name)
        return accessories.firstIndex { $0.nameKeyHash == hash && $0.name == name }
            ?? accessories.firstIndex { $0.nameKeyHash == hash && HomeName.matches($0.name, name) }
    }

    /// The accessory that `name` names under ``HomeName/matches(_:_:)``.
    public func accessory(named name: String) -> Accessory? {
        accessoryIndex(named: name).map { accessories[$0] }
    }
}
