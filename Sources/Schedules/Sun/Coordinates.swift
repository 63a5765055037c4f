/// A home's place on the Earth, in degrees: north and east positive. Its sunrise and sunset come
/// from it.
package struct Coordinates: Sendable, Hashable {
    package let latitude: Double
    package let longitude: Double

    package init(latitude: Double, longitude: Double) throws(ScheduleError) {
        guard (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw ScheduleError(
                .invalidCoordinates, "latitude \(latitude), longitude \(longitude): the Earth has ±90° and ±180°")
        }
        self.latitude = latitude
        self.longitude = longitude
    }
}
