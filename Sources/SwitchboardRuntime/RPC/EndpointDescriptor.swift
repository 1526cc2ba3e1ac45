import Foundation

/// Everything a transport needs to know about an endpoint, generated from the schema.
public struct EndpointDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// The fields, in one shared object: every request carries its endpoint, and copying one
    /// reference costs far less than copying (and later destroying) four strings, a
    /// dictionary and the rest, which a request's copies and its server context each did.
    @usableFromInline
    final class Storage: Sendable {
        @usableFromInline let rpcName: String
        @usableFromInline let grpcPath: String
        @usableFromInline let verb: String
        @usableFromInline let pathTemplate: String
        @usableFromInline let auth: AuthRequirement
        @usableFromInline let isIdempotent: Bool
        @usableFromInline let defaultTimeout: Duration?
        @usableFromInline let isDeprecated: Bool
        @usableFromInline let requestBodyType: (any ProtoMessage.Type)?
        @usableFromInline let responseBodyType: (any ProtoMessage.Type)?
        @usableFromInline let errorStatusByGRPCCode: [Int: Int]
        @usableFromInline let versions: ClosedRange<Int>?
        @usableFromInline let encoding: BodyEncoding
        @usableFromInline let requestType: (any ProtoMessage.Type)?

        init(
            rpcName: String, verb: String, pathTemplate: String, auth: AuthRequirement, isIdempotent: Bool,
            defaultTimeout: Duration?, isDeprecated: Bool, requestBodyType: (any ProtoMessage.Type)?,
            responseBodyType: (any ProtoMessage.Type)?, errorStatusByGRPCCode: [Int: Int], versions: ClosedRange<Int>?,
            encoding: BodyEncoding, requestType: (any ProtoMessage.Type)?
        ) {
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
            self.versions = versions
            self.encoding = encoding
            self.requestType = requestType
        }
    }

    @usableFromInline let storage: Storage

    /// The stable name a gRPC-style transport uses: `package.Service/Method`.
    @inlinable public var rpcName: String { storage.rpcName }
    /// The path of its gRPC calls, `/package.Service/Method` (made once, not per call).
    @inlinable public var grpcPath: String { storage.grpcPath }
    /// The HTTP-like verb: `GET`, `PUT`, `POST`, `PATCH`, `DELETE`.
    @inlinable public var verb: String { storage.verb }
    /// The path template with `{field}` placeholders, such as `/v1/accounts/username_hash/{hash}`.
    @inlinable public var pathTemplate: String { storage.pathTemplate }
    /// Which connection the service may be called through.
    @inlinable public var auth: AuthRequirement { storage.auth }
    /// Whether repeating the request has no further effect, so it may be retried.
    @inlinable public var isIdempotent: Bool { storage.isIdempotent }
    /// The timeout applied when the call does not set one.
    @inlinable public var defaultTimeout: Duration? { storage.defaultTimeout }
    /// Whether the schema marks the endpoint deprecated.
    @inlinable public var isDeprecated: Bool { storage.isDeprecated }
    /// The message the request body holds (the request less its bound fields, or the field
    /// named by `body`); `nil` when the endpoint sends no body. Lets interceptors decode a
    /// body they only see as bytes, such as a logger printing it with `@sensitive` fields redacted.
    @inlinable public var requestBodyType: (any ProtoMessage.Type)? { storage.requestBodyType }
    /// The message a successful response's body holds; `nil` when the endpoint returns none.
    @inlinable public var responseBodyType: (any ProtoMessage.Type)? { storage.responseBodyType }
    /// For gRPC: the status of the declared error each gRPC status code stands for (from
    /// `grpc CODE` in the schema, or the documented default for the error's status), so a
    /// gRPC failure becomes the endpoint's own error as the same HTTP-like status would.
    @inlinable public var errorStatusByGRPCCode: [Int: Int] { storage.errorStatusByGRPCCode }
    /// The service versions that offer the endpoint (`version` in the rpc); `nil`: every
    /// version of its service.
    @inlinable public var versions: ClosedRange<Int>? { storage.versions }
    /// How the endpoint's bodies are encoded (`encoding` in the schema).
    @inlinable public var encoding: BodyEncoding { storage.encoding }
    /// The whole request message, bound fields included (what gRPC carries); `nil` when the
    /// endpoint takes no request. Lets a gRPC server transcode `application/grpc+json`.
    @inlinable public var requestType: (any ProtoMessage.Type)? { storage.requestType }

    /// Creates a descriptor.
    public init(
        rpcName: String, verb: String, pathTemplate: String, auth: AuthRequirement,
        isIdempotent: Bool = false, defaultTimeout: Duration? = nil, isDeprecated: Bool = false,
        requestBodyType: (any ProtoMessage.Type)? = nil, responseBodyType: (any ProtoMessage.Type)? = nil,
        errorStatusByGRPCCode: [Int: Int] = [:], versions: ClosedRange<Int>? = nil, encoding: BodyEncoding = .protobuf,
        requestType: (any ProtoMessage.Type)? = nil
    ) {
        storage = Storage(
            rpcName: rpcName, verb: verb, pathTemplate: pathTemplate, auth: auth, isIdempotent: isIdempotent,
            defaultTimeout: defaultTimeout, isDeprecated: isDeprecated, requestBodyType: requestBodyType,
            responseBodyType: responseBodyType, errorStatusByGRPCCode: errorStatusByGRPCCode, versions: versions,
            encoding: encoding, requestType: requestType)
    }

    /// `rpcName (VERB template)`, safe to log: the template holds no values.
    public var description: String { "\(rpcName) (\(verb) \(pathTemplate))" }

    public static func == (lhs: EndpointDescriptor, rhs: EndpointDescriptor) -> Bool {
        if lhs.storage === rhs.storage { return true }
        return lhs.rpcName == rhs.rpcName && lhs.verb == rhs.verb && lhs.pathTemplate == rhs.pathTemplate && lhs.auth == rhs.auth
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

    /// A generated call's headers when nothing is bound to headers: `Accept` this encoding,
    /// then its `Content-Type` if the request has a body. Shared, so such a call allocates no
    /// header storage unless something (a call option's header) is added.
    public func requestHeaders(withBody: Bool) -> RPCHeaders {
        switch (self, withBody) {
        case (.protobuf, false): return Self.protobufAccept
        case (.protobuf, true): return Self.protobufAcceptAndContentType
        case (.json, false): return Self.jsonAccept
        case (.json, true): return Self.jsonAcceptAndContentType
        }
    }

    private static let protobufAccept = RPCHeaders([(name: "Accept", value: BodyEncoding.protobuf.contentType)])
    private static let protobufAcceptAndContentType = RPCHeaders([
        (name: "Accept", value: BodyEncoding.protobuf.contentType), (name: "Content-Type", value: BodyEncoding.protobuf.contentType),
    ])
    private static let jsonAccept = RPCHeaders([(name: "Accept", value: BodyEncoding.json.contentType)])
    private static let jsonAcceptAndContentType = RPCHeaders([
        (name: "Accept", value: BodyEncoding.json.contentType), (name: "Content-Type", value: BodyEncoding.json.contentType),
    ])
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
