/// VirtualDevices builds on the home model's types (``AccessoryDriver``, ``Accessory``, ...); re-export them so
/// a driver's user needs one import.
@_exported import HomeModel
