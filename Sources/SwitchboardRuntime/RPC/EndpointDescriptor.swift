import Foundation

/// Everything a transport needs to know about an endpoint, generated from the schema.
public struct EndpointDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The stable name a gRPC-style transport uses: `package.Service/Method`.
    public let rpcName: String
    /// The HTTP-like verb: `GET`, `PUT`, `POST`, `PATCH`, `DELETE`.
    public let verb: String
    /// The path template with `{field}` placeholders, such as `/v1/accounts/username_hash/{hash}`.
    public let pathTemplate: String
    /// Which connection the service may be called through.
    public let auth: AuthRequirement
    /// Whether repeating the request has no further effect, so it may be retried.
    public let isIdempotent: Bool
    /// The timeout applied when the call does not set one.
    public let defaultTimeout: Duration?
    /// Whether the schema marks the endpoint deprecated.
    public let isDeprecated: Bool

    /// Creates a descriptor.
    public init(
        rpcName: String, verb: String, pathTemplate: String, auth: AuthRequirement,
        isIdempotent: Bool = false, defaultTimeout: Duration? = nil, isDeprecated: Bool = false
    ) {
        self.rpcName = rpcName
        self.verb = verb
        self.pathTemplate = pathTemplate
        self.auth = auth
        self.isIdempotent = isIdempotent
        self.defaultTimeout = defaultTimeout
        self.isDeprecated = isDeprecated
    }

    /// `rpcName (VERB template)`, safe to log: the template holds no values.
    public var description: String { "\(rpcName) (\(verb) \(pathTemplate))" }
}

/// How request and response bodies are encoded.
public enum BodyEncoding: String, Sendable, Hashable {
    case protobuf
    case json

    /// The `Content-Type` header value.
    public var contentType: String {
        switch self {
        case .protobuf: return "application/x-protobuf"
        case .json: return "application/json"
        }
    }
}
