import Gateway
import HomeModel
import JSON

/// A request read from its operation and body, as the command path reads one: for the tests of
/// each request's forms and refusals.
enum RequestBodies {
    static func request(_ operation: String, _ body: String) throws -> Command.Request {
        try Command.Request(operation: operation, body: JSON.parse(body))
    }

    /// The code a body is refused with before anything runs; nil when it is read.
    static func code(_ operation: String, _ body: String) -> HomeError.Code? {
        do {
            _ = try request(operation, body)
            return nil
        } catch let error as HomeError {
            return error.code
        } catch {
            return nil
        }
    }
}
