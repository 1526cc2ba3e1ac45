/// A gRPC status code (the numbering of grpc/doc/statuscodes.md).
public enum GRPCStatusCode: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Success.
    case ok = 0
    /// The caller cancelled.
    case cancelled = 1
    /// An error of no known kind.
    case unknown = 2
    /// The request is invalid whatever the state.
    case invalidArgument = 3
    /// The deadline passed first.
    case deadlineExceeded = 4
    /// Something requested does not exist.
    case notFound = 5
    /// What the call creates exists already.
    case alreadyExists = 6
    /// The caller may not do this.
    case permissionDenied = 7
    /// A quota or a size limit ran out.
    case resourceExhausted = 8
    /// The system is not in a state that allows it.
    case failedPrecondition = 9
    /// A concurrency conflict aborted it.
    case aborted = 10
    /// Past the valid range.
    case outOfRange = 11
    /// Not served here.
    case unimplemented = 12
    /// An invariant broke.
    case `internal` = 13
    /// Not available now: retry, with backoff.
    case unavailable = 14
    /// Unrecoverable data loss.
    case dataLoss = 15
    /// No valid credentials.
    case unauthenticated = 16

    /// The code's name as the spec writes it (`NOT_FOUND`).
    public var description: String {
        ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
         "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
         "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"][rawValue]
    }

    /// The code for a response whose HTTP status was not 200 (grpc/doc/http-grpc-status-mapping.md).
    public init(httpStatus: Int) {
        switch httpStatus {
        case 400: self = .internal
        case 401: self = .unauthenticated
        case 403: self = .permissionDenied
        case 404: self = .unimplemented
        case 429, 502, 503, 504: self = .unavailable
        default: self = .unknown
        }
    }

    /// The code an error status travels as when its endpoint names none (`grpc CODE` in the
    /// schema): the schema language's default mapping, which the generator writes into each
    /// endpoint's declared errors too (`GRPCStatusCodes.defaultCode(forStatus:)`; a test holds
    /// the two alike). `nil` for a status without a default.
    public init?(defaultForErrorStatus status: Int) {
        switch status {
        case 400: self = .invalidArgument
        case 401: self = .unauthenticated
        case 403: self = .permissionDenied
        case 404: self = .notFound
        case 409: self = .alreadyExists
        case 412: self = .failedPrecondition
        case 416: self = .outOfRange
        case 429: self = .resourceExhausted
        case 499: self = .cancelled
        case 500: self = .internal
        case 501: self = .unimplemented
        case 503: self = .unavailable
        case 504: self = .deadlineExceeded
        default: return nil
        }
    }
}
