/// Why the bridge could not turn a command into a call: each becomes a JSON error document
/// with a REST status, so a foreign core handles it like any other answer.
public struct BridgeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable code for the kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// The command is not `VERB /path...` (400).
        case badCommand
        /// No endpoint of the schema serves the path (404).
        case unknownPath
        /// An endpoint serves the path, but not with this verb (405).
        case methodNotAllowed
        /// Several endpoints serve the request and its keys do not tell them apart (400).
        case ambiguousRoute
        /// The body is not JSON (400).
        case badJSON
        /// The JSON, path or query does not fit the endpoint's request message (422).
        case schemaViolation
        /// The body is larger than ``StringBridge/Options/maxRequestBytes`` (413).
        case tooLarge
        /// No connection of the kind the endpoint needs is configured (503).
        case notConnected
        /// The bridge was closed (503).
        case closed
        /// `switchboard_open`'s configuration is wrong: an unknown or ill-formed member, a
        /// value out of range, or a schema that does not compile (400).
        case badConfiguration
    }

    /// What went wrong.
    public var code: Code
    /// Human-readable detail; it names fields and paths, never values of keys or credentials.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The REST status the error document carries.
    public var status: Int {
        switch code {
        case .badCommand, .ambiguousRoute, .badJSON, .badConfiguration: return 400
        case .unknownPath: return 404
        case .methodNotAllowed: return 405
        case .tooLarge: return 413
        case .schemaViolation: return 422
        case .notConnected, .closed: return 503
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
