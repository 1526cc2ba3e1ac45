import Foundation

/// One request as a transport sees it: verb and path from the route, encoded body,
/// headers (bound fields and credentials), and an optional deadline.
public struct RPCRequest: Sendable {
    /// The endpoint called, which gives the verb, path template and body types.
    public var endpoint: EndpointDescriptor
    /// The concrete path with its query string.
    public var path: String
    /// The path with sensitive values replaced, for logs and errors.
    public var logSafePath: String
    /// The headers: bound fields, credentials and content types.
    public var headers: RPCHeaders
    /// The encoded body, or `nil` when the endpoint sends none. A body given as a message
    /// (``init(endpoint:path:logSafePath:headers:protobufBody:deadline:message:)``) is encoded
    /// each time this is read; setting it replaces that message.
    public var body: Data? {
        get {
            switch bodyStorage {
            case let .bytes(data): data
            case let .protobuf(box): box.serializedData()
            }
        }
        set { bodyStorage = .bytes(newValue) }
    }

    /// The body as a message not yet encoded, when it was given as one and not replaced
    /// since: a transport that writes protobuf straight into its frames (the chat
    /// connection) writes this instead of reading ``body``, so no `Data` is made for it.
    public var protobufBody: (any ProtoMessage)? { protobufBodyBox?.message }

    /// ``protobufBody`` behind calls specialized for its type, for transports in this package.
    package var protobufBodyBox: ProtobufBodyBox? {
        if case let .protobuf(box) = bodyStorage { return box }
        return nil
    }

    @usableFromInline enum BodyStorage: Sendable {
        case bytes(Data?)
        // A class: a request is copied several times on its way to a transport, and copying
        // a message held as `any ProtoMessage` (boxed when large) cost more than its `Data`.
        case protobuf(ProtobufBodyBox)
    }

    @usableFromInline var bodyStorage: BodyStorage
    /// When the caller stops waiting.
    public var deadline: ContinuousClock.Instant?
    /// The whole request message, bound fields included, for transports that send it as
    /// one message rather than as a path, query, headers and body (gRPC); `nil` when the
    /// endpoint takes no request.
    public var message: (any ProtoMessage)?
    /// The whole request message already encoded in protobuf, for callers without a generated
    /// type (messages typed by a schema read at run time); used when `message` is nil.
    public var messageBytes: Data?
    /// The caller's ``ResponseCapture`` (from ``CallOptions/responseCapture``): a transport
    /// that ends a call with an error but got metadata with it (a gRPC status the endpoint
    /// does not declare) records that metadata here.
    public var responseCapture: ResponseCapture?

    /// Creates a request.
    public init(
        endpoint: EndpointDescriptor, path: String, logSafePath: String? = nil, headers: RPCHeaders = [:],
        body: Data? = nil, deadline: ContinuousClock.Instant? = nil, message: (any ProtoMessage)? = nil
    ) {
        self.endpoint = endpoint
        self.path = path
        self.logSafePath = logSafePath ?? endpoint.pathTemplate
        self.headers = headers
        self.bodyStorage = .bytes(body)
        self.deadline = deadline
        self.message = message
    }

    /// Creates a request whose body is `protobufBody` in protobuf, encoded only when a
    /// transport needs its bytes (see ``protobufBody``).
    @inlinable
    public init(
        endpoint: EndpointDescriptor, path: String, logSafePath: String? = nil, headers: RPCHeaders = [:],
        protobufBody: some ProtoMessage, deadline: ContinuousClock.Instant? = nil, message: (any ProtoMessage)? = nil
    ) {
        self.init(endpoint: endpoint, path: path, logSafePath: logSafePath, headers: headers, body: nil, deadline: deadline, message: message)
        self.bodyStorage = .protobuf(TypedProtobufBodyBox(protobufBody))
    }

    /// The verb, from the endpoint.
    public var verb: String { endpoint.verb }
}

/// A response: HTTP-like status, headers and body.
public struct RPCResponse: Sendable, Hashable {
    /// The HTTP-like status code, such as 200 or 404.
    public var status: Int
    /// The response's headers, such as `Content-Type` and `Retry-After`.
    public var headers: RPCHeaders
    /// The encoded body; empty when there is none.
    public var body: Data
    /// The reason phrase ("OK"), which Signal's envelope carries.
    public var message: String?
    /// Headers that came after the body: over gRPC the trailing metadata (also among
    /// ``headers``, after the initial metadata); empty on the WebSocket, which has none.
    public var trailers: RPCHeaders

    /// Creates a response.
    public init(status: Int, headers: RPCHeaders = [:], body: Data = Data(), message: String? = nil, trailers: RPCHeaders = [:]) {
        self.status = status
        self.headers = headers
        self.body = body
        self.message = message
        self.trailers = trailers
    }

    /// Whether the status is 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// `delay` as a `Retry-After` value: whole seconds, rounded up, so a client told 1.5 s
    /// does not come back after 1 (or a 0.5 s wait read as "retry now").
    public static func retryAfterValue(_ delay: Duration) -> String {
        let (seconds, attoseconds) = max(delay, .zero).components
        return String(attoseconds > 0 ? seconds + 1 : seconds)
    }

    /// The longest `Retry-After` taken as said: about 68 years (`Int32.max` seconds). A longer
    /// one reads as this, so that a deadline computed from it stays within what clocks and
    /// `Task.sleep` accept (a value near `Int.max` seconds traps there).
    public static let maximumRetryAfter = Duration.seconds(Int(Int32.max))

    /// The `Retry-After` header as a delay: seconds, or an HTTP date relative to `now` (an
    /// IMF-fixdate, or the obsolete RFC 850 and asctime forms, as RFC 9110 requires); at most
    /// ``maximumRetryAfter``.
    public func retryAfter(now: Date = Date()) -> Duration? {
        guard let text = headers["Retry-After"]?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = Int(text), seconds >= 0 { return min(.seconds(seconds), Self.maximumRetryAfter) }
        // More digits than an Int holds: as long as can be said.
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) { return Self.maximumRetryAfter }
        // Any of the three forms RFC 9110 (section 5.6.7) has a recipient accept.
        guard let date = HTTPDate.parse(text, now: now) else { return nil }
        return min(.milliseconds(max(0, Int64(date.timeIntervalSince(now) * 1000))), Self.maximumRetryAfter)
    }
}

/// A request body kept as a message until a transport needs it: its size and encoding are
/// asked through calls specialized for the message's type.
@usableFromInline
package class ProtobufBodyBox: @unchecked Sendable {
    @usableFromInline init() {}

    /// The message.
    package var message: any ProtoMessage { fatalError("abstract") }
    /// The message's encoded size.
    package func serializedSize() -> Int { fatalError("abstract") }
    /// Writes the message (``serializedSize()`` bytes) into `writer`.
    package func serialize(into writer: inout WireWriter) { fatalError("abstract") }
    /// The message's encoding.
    package func serializedData() -> Data { fatalError("abstract") }
}

/// ``ProtobufBodyBox`` for one message type, stored inline.
@usableFromInline
final class TypedProtobufBodyBox<Message: ProtoMessage>: ProtobufBodyBox, @unchecked Sendable {
    private let value: Message
    @usableFromInline init(_ value: Message) { self.value = value }
    override var message: any ProtoMessage { value }
    override func serializedSize() -> Int { value.serializedSize() }
    override func serialize(into writer: inout WireWriter) { value.serialize(into: &writer) }
    override func serializedData() -> Data { value.serializedData() }
}
