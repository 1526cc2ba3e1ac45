import Foundation

/// Everything a transport needs to know about an endpoint, generated from the schema.
public struct EndpointDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The stable name a gRPC-style transport uses: `package.Service/Method`.
    public let rpcName: String
    /// The path of its gRPC calls, `/package.Service/Method` (made once, not per call).
    public let grpcPath: String
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
    /// The message the request body holds (the request less its bound fields, or the field
    /// named by `body`); `nil` when the endpoint sends no body. Lets interceptors decode a
    /// body they only see as bytes, such as a logger printing it with `@sensitive` fields redacted.
    public let requestBodyType: (any ProtoMessage.Type)?
    /// The message a successful response's body holds; `nil` when the endpoint returns none.
    public let responseBodyType: (any ProtoMessage.Type)?
    /// For gRPC: the status of the declared error each gRPC status code stands for (from
    /// `grpc CODE` in the schema, or the documented default for the error's status), so a
    /// gRPC failure becomes the endpoint's own error as the same HTTP-like status would.
    public let errorStatusByGRPCCode: [Int: Int]
    /// The service versions that offer the endpoint (`version` in the rpc); `nil`: every
    /// version of its service.
    public let versions: ClosedRange<Int>?
    /// How the endpoint's bodies are encoded (`encoding` in the schema).
    public let encoding: BodyEncoding
    /// The whole request message, bound fields included (what gRPC carries); `nil` when the
    /// endpoint takes no request. Lets a gRPC server transcode `application/grpc+json`.
    public let requestType: (any ProtoMessage.Type)?

    /// Creates a descriptor.
    public init(
        rpcName: String, verb: String, pathTemplate: String, auth: AuthRequirement,
        isIdempotent: Bool = false, defaultTimeout: Duration? = nil, isDeprecated: Bool = false,
        requestBodyType: (any ProtoMessage.Type)? = nil, responseBodyType: (any ProtoMessage.Type)? = nil,
        errorStatusByGRPCCode: [Int: Int] = [:], versions: ClosedRange<Int>? = nil, encoding: BodyEncoding = .protobuf,
        requestType: (any ProtoMessage.Type)? = nil
    ) {
        self.versions = versions
        self.encoding = encoding
        self.requestType = requestType
        self.rpcName = rpcName
        grpcPath = "/" + rpcName
        self.verb = verb
        self.pathTemplate = pathTemplate
        self.auth = auth
        self.isIdempotent = isIdempotent
        self.defaultTimeout = defaultTimeout
        self.isDeprecated = isDeprecated
        self.requestBodyType = requestBodyType
        self.responseBodyType = responseBodyType
        self.errorStatusByGRPCCode = errorStatusByGRPCCode
    }

    /// `rpcName (VERB template)`, safe to log: the template holds no values.
    public var description: String { "\(rpcName) (\(verb) \(pathTemplate))" }

    public static func == (lhs: EndpointDescriptor, rhs: EndpointDescriptor) -> Bool {
        lhs.rpcName == rhs.rpcName && lhs.verb == rhs.verb && lhs.pathTemplate == rhs.pathTemplate && lhs.auth == rhs.auth
            && lhs.isIdempotent == rhs.isIdempotent && lhs.defaultTimeout == rhs.defaultTimeout
            && lhs.isDeprecated == rhs.isDeprecated && lhs.errorStatusByGRPCCode == rhs.errorStatusByGRPCCode && lhs.versions == rhs.versions
            && lhs.encoding == rhs.encoding && lhs.requestType.map(ObjectIdentifier.init) == rhs.requestType.map(ObjectIdentifier.init)
            && lhs.requestBodyType.map(ObjectIdentifier.init) == rhs.requestBodyType.map(ObjectIdentifier.init)
            && lhs.responseBodyType.map(ObjectIdentifier.init) == rhs.responseBodyType.map(ObjectIdentifier.init)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(rpcName)
        hasher.combine(verb)
        hasher.combine(pathTemplate)
    }
}

/// How request and response bodies are encoded.
public enum BodyEncoding: String, Sendable, Hashable {
    /// The protobuf binary wire format.
    case protobuf
    /// Canonical protobuf JSON.
    case json

    /// The `Content-Type` header value.
    public var contentType: String {
        switch self {
        case .protobuf: return "application/x-protobuf"
        case .json: return "application/json"
        }
    }

    /// Headers holding only this encoding's `Content-Type`, shared: a response built from
    /// them allocates no header storage of its own until something is added.
    public var contentTypeHeaders: RPCHeaders {
        switch self {
        case .protobuf: return Self.protobufHeaders
        case .json: return Self.jsonHeaders
        }
    }

    private static let protobufContentType = BodyEncoding.protobuf.contentType
    private static let jsonContentType = BodyEncoding.json.contentType
    private static let protobufHeaders = RPCHeaders([(name: "Content-Type", value: BodyEncoding.protobuf.contentType)])
    private static let jsonHeaders = RPCHeaders([(name: "Content-Type", value: BodyEncoding.json.contentType)])

    /// The encoding a `Content-Type` names (parameters such as `charset` ignored), or nil
    /// for one this runtime does not decode.
    public init?(contentType: String) {
        // Read on every response: what Switchboard servers send is compared whole first (a
        // length check and a memcmp), anything else by bytes, not Foundation's string search.
        if contentType == Self.protobufContentType {
            self = .protobuf
            return
        }
        if contentType == Self.jsonContentType {
            self = .json
            return
        }
        var utf8 = contentType.utf8[...]
        if let parameters = utf8.firstIndex(of: UInt8(ascii: ";")) { utf8 = utf8[..<parameters] }
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while let first = utf8.first, isBlank(first) { utf8 = utf8.dropFirst() }
        while let last = utf8.last, isBlank(last) { utf8 = utf8.dropLast() }
        let matches = { (name: StaticString) -> Bool in
            guard name.utf8CodeUnitCount == utf8.count else { return false }
            return name.withUTF8Buffer { expected in
                zip(expected, utf8).allSatisfy { expected, byte in
                    expected == (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
                }
            }
        }
        if matches("application/x-protobuf") || matches("application/protobuf") || matches("application/vnd.google.protobuf") {
            self = .protobuf
        } else if matches("application/json") {
            self = .json
        } else {
            return nil
        }
    }
}
