/// How a service's endpoints may be reached.
public enum ServiceAuth: String, Sendable, Hashable {
    /// Only through the authenticated connection.
    case account
    /// Only through the unauthenticated connection.
    case none
}

/// A service's availability, in the spirit of SimpleX's service catalogue.
public enum ServiceStatus: String, Sendable, Hashable {
    case enabled, experimental, disabled
}

/// How bodies are encoded on the wire.
public enum BodyEncodingKind: String, Sendable, Hashable {
    case protobuf, json
}

/// A per-request credential mapped to a header.
public struct KeyDefinition: Sendable, Hashable {
    /// How the credential's value is written into its header.
    public enum Form: String, Sendable, Hashable {
        /// Bytes, base64 in the header.
        case base64
        /// A string, as is.
        case string
        /// A string, as `Bearer <value>`.
        case bearer
    }
    public var name: String
    /// The generated credential type, such as `AccessKey`.
    public var swiftTypeName: String
    public var header: String
    public var form: Form
    public var documentation: [String]
    public var location: SourceLocation
}

/// A status an endpoint answers with, mapped to a case of its error type.
public struct ErrorCaseDefinition: Sendable, Hashable {
    public var status: Int
    public var name: String
    public var swiftName: String
    /// A message decoded from the error's body.
    public var body: Int?
    /// Whether the case carries the `Retry-After` delay.
    public var retryAfter: Bool
    /// The gRPC status code (1...16) the schema's `grpc CODE` gives, if any; see
    /// ``EndpointDefinition/errorStatusByGRPCCode`` for the mapping with defaults.
    public var grpcCode: Int?
    public var documentation: [String]
    public var location: SourceLocation
}

/// How a request field travels in a path or query.
public enum ParameterEncoding: String, Sendable, Hashable {
    /// Percent-encoded text (strings, numbers, booleans, enum names).
    case percent
    /// Unpadded base64url (bytes).
    case base64url
}

/// A request field bound to a path segment, query parameter or header.
public struct ParameterBinding: Sendable, Hashable {
    /// The placeholder, query or header name.
    public var name: String
    /// Index of the field in the request message.
    public var field: Int
    public var encoding: ParameterEncoding
}

/// What an endpoint sends as its body.
public enum BodyBinding: Sendable, Hashable {
    case none
    /// The whole request, less fields bound elsewhere.
    case request
    /// One message field of the request.
    case field(Int)
}

/// One endpoint of a service.
public struct EndpointDefinition: Sendable, Hashable {
    public var name: String
    public var swiftName: String
    /// `package.Service/Method`
    public var rpcName: String
    public var verb: String
    /// The template as written, with `{field}` and `{field:encoding}` placeholders.
    public var pathTemplate: String
    /// The template as the runtime sees it: placeholders without encodings.
    public var runtimePathTemplate: String
    public var pathParameters: [ParameterBinding]
    public var queryParameters: [ParameterBinding]
    public var headers: [ParameterBinding]
    public var body: BodyBinding
    /// Index into ``Schema/messages``, or `nil` for none.
    public var request: Int?
    public var response: Int?
    /// Every error case, shared sets included, sorted by status.
    public var errors: [ErrorCaseDefinition]
    /// Indices into ``Schema/keys``.
    public var keys: [Int]
    public var timeoutMilliseconds: Int?
    public var isIdempotent: Bool
    public var isDeprecated: Bool
    public var encoding: BodyEncodingKind
    public var documentation: [String]
    public var location: SourceLocation
    /// How the endpoint pages (`paginate { ... }`), if it does.
    public var pagination: PaginationDefinition? = nil
    /// The service versions that offer the endpoint (`version 2 to 3` in the rpc); `nil`: all of the service's.
    public var versions: ClosedRange<Int>? = nil
}

/// Where a service is offered: `countries [USA, GBR]` allows only those, `countries [!CHN]`
/// offers it everywhere else. Codes are ISO 3166-1 alpha-3.
public enum CountryRule: Sendable, Hashable {
    case allow([String])
    case deny([String])

    /// The catalogue's spelling: `[USA, GBR]` or `[!CHN]`.
    public var codes: [String] {
        switch self {
        case let .allow(codes): return codes
        case let .deny(codes): return codes.map { "!" + $0 }
        }
    }
}

/// How a paginated endpoint's pages follow one another: the request field that carries
/// the cursor, where a response's items are, and where the next cursor comes from.
public struct PaginationDefinition: Sendable, Hashable {
    /// Where the next page's cursor comes from.
    public enum NextCursor: Sendable, Hashable {
        /// A field of the response (index into its fields), such as `nextBeforeId`.
        case responseField(Int)
        /// A field of the page's first item (index into the item message's fields).
        case firstItemField(Int)
        /// A field of the page's last item.
        case lastItemField(Int)
    }
    /// Index of the cursor field in the request message.
    public var cursorField: Int
    /// Index of the page-size field in the request message, if declared.
    public var limitField: Int?
    /// Index of the list field holding the items in the response message.
    public var itemsField: Int
    public var next: NextCursor
    /// Index of a bool field of the response that is false on the last page, if declared.
    public var moreField: Int?
}

/// A request the server pushes to clients of a service.
public struct EventDefinition: Sendable, Hashable {
    public enum Acknowledgement: String, Sendable, Hashable {
        case afterHandling, onReceipt
    }
    public var name: String
    public var swiftName: String
    public var verb: String
    public var path: String
    public var payload: Int?
    public var acknowledgement: Acknowledgement
    public var documentation: [String]
    public var location: SourceLocation
}

/// A group of endpoints reached through one kind of connection.
public struct ServiceDefinition: Sendable, Hashable {
    public var name: String
    /// `package.Name`
    public var fullName: String
    public var auth: ServiceAuth
    public var versions: ClosedRange<Int>?
    public var status: ServiceStatus
    public var encoding: BodyEncodingKind
    public var endpoints: [EndpointDefinition]
    public var events: [EventDefinition]
    public var isDeprecated: Bool
    public var documentation: [String]
    public var file: Int
    public var location: SourceLocation
    /// Where the service is offered (`countries [...]`); `nil`: everywhere.
    public var countries: CountryRule? = nil
}

extension EndpointDefinition {
    /// Which declared error each gRPC status code stands for (code → HTTP-like status):
    /// every `grpc CODE` the schema gives, then, for errors without one, the default code
    /// of their status where no other error has claimed it. Errors left out arrive over
    /// gRPC only from a Switchboard server, which sends the exact status too.
    public var errorStatusByGRPCCode: [Int: Int] {
        var mapping: [Int: Int] = [:]
        for error in errors { if let code = error.grpcCode, mapping[code] == nil { mapping[code] = error.status } }
        for error in errors where error.grpcCode == nil {
            if let code = GRPCStatusCodes.defaultCode(forStatus: error.status), mapping[code] == nil { mapping[code] = error.status }
        }
        return mapping
    }
}

/// gRPC's status codes by name, and the default code for an HTTP-like error status.
public enum GRPCStatusCodes {
    /// The names in code order: `OK` is 0, `UNAUTHENTICATED` 16.
    public static let names = [
        "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
        "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
    ]

    /// The code a name stands for.
    public static func code(named name: String) -> Int? { names.firstIndex(of: name) }

    /// The code an error with this status travels as when the schema does not say:
    /// the usual HTTP mapping of google.rpc.Code, read backwards.
    public static func defaultCode(forStatus status: Int) -> Int? {
        switch status {
        case 400: 3 // INVALID_ARGUMENT
        case 401: 16 // UNAUTHENTICATED
        case 403: 7 // PERMISSION_DENIED
        case 404: 5 // NOT_FOUND
        case 409: 6 // ALREADY_EXISTS
        case 412: 9 // FAILED_PRECONDITION
        case 416: 11 // OUT_OF_RANGE
        case 429: 8 // RESOURCE_EXHAUSTED
        case 499: 1 // CANCELLED
        case 500: 13 // INTERNAL
        case 501: 12 // UNIMPLEMENTED
        case 503: 14 // UNAVAILABLE
        case 504: 4 // DEADLINE_EXCEEDED
        default: nil
        }
    }
}
