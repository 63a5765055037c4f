import HTTPTypes
import Hummingbird

/// The login form (`POST /login`): the login page's token and the account's credentials.
struct LoginForm: Decodable {
    var csrf: String?
    var account: String?
    var password: String?
}

/// A form posted within a session: its CSRF token, and the page to return to.
protocol SessionForm: Decodable {
    var csrf: String? { get }
    var `return`: String? { get }
}

/// The logout button's form.
struct LogoutForm: SessionForm {
    var csrf: String?
    var `return`: String?
}

/// A command of a home (`POST /command`): `set` a characteristic, `run` a scene, `identify` an accessory.
struct CommandForm: SessionForm {
    var csrf: String?
    var `return`: String?
    var kind: String?
    var home: String?
    var room: String?
    var accessory: String?
    var service: String?
    var characteristic: String?
    var value: String?
    var actionSet: String?
}

/// A request (`POST /request`): the operation, and its body's members as the form's other fields.
struct RequestForm: SessionForm {
    var csrf: String?
    var `return`: String?
    var operation: String?
    /// Every field but `csrf`, `operation` and `return`.
    var members: [String: String]

    init(from decoder: any Decoder) throws {
        let fields = try [String: String](from: decoder)
        (csrf, `return`, operation) = (fields["csrf"], fields["return"], fields["operation"])
        members = fields.filter { !["csrf", "return", "operation"].contains($0.key) }
    }
}

/// Why a POST's body was not read as its form: thrown out of the route, and answered with a page that
/// says so (by ``SecurityHeaders``, as Hummingbird's own errors are).
enum FormProblem: HTTPResponseError {
    /// Larger than the page's forms can be (``WebSite/maximumBody``).
    case tooLarge
    /// Not an urlencoded form of the fields expected: a name twice, an escape that is not one (no
    /// page of ours sends either).
    case unreadable

    var status: HTTPResponse.Status { self == .tooLarge ? .contentTooLarge : .badRequest }

    func response(from request: Request, context: some RequestContext) -> Response {
        switch self {
        case .tooLarge: .problem("Too large", "The form is too large.", status: status)
        case .unreadable: .problem("Not a form", "The form could not be read.", status: status)
        }
    }
}

extension Request {
    /// The urlencoded body of a POST, decoded by Hummingbird's `URLEncodedFormDecoder`.
    func form<Form: Decodable>(_ type: Form.Type) async throws(FormProblem) -> Form {
        var request = self
        guard let buffer = try? await request.collectBody(upTo: WebSite.maximumBody) else { throw .tooLarge }
        do {
            return try URLEncodedFormDecoder().decode(type, from: String(buffer: buffer))
        } catch {
            throw .unreadable
        }
    }
}
