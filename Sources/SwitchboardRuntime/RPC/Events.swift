import Foundation

/// A request the server pushes to the client, such as an incoming message.
public struct EventDescriptor: Sendable, Hashable {
    /// When the client answers a push.
    public enum Acknowledgement: String, Sendable, Hashable {
        /// Only after the listener returns without throwing; otherwise the server redelivers.
        case afterHandling
        /// As soon as the push is decoded, before the listener runs.
        case onReceipt
    }

    /// The event's name in the schema.
    public let name: String
    /// The verb the server pushes with, such as `PUT`.
    public let verb: String
    /// The exact path the server pushes to, matched without its query.
    public let path: String
    /// When the client answers the push.
    public let acknowledgement: Acknowledgement
    /// The message the push carries; `nil` for an event without a payload. Lets push
    /// interceptors decode a payload they only see as bytes.
    public let payloadType: (any ProtoMessage.Type)?

    /// Creates a descriptor.
    public init(name: String, verb: String, path: String, acknowledgement: Acknowledgement, payloadType: (any ProtoMessage.Type)? = nil) {
        self.name = name
        self.verb = verb
        self.path = path
        self.acknowledgement = acknowledgement
        self.payloadType = payloadType
    }

    public static func == (lhs: EventDescriptor, rhs: EventDescriptor) -> Bool {
        lhs.name == rhs.name && lhs.verb == rhs.verb && lhs.path == rhs.path && lhs.acknowledgement == rhs.acknowledgement
            && lhs.payloadType.map(ObjectIdentifier.init) == rhs.payloadType.map(ObjectIdentifier.init)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(verb)
        hasher.combine(path)
    }

    /// Whether a pushed request is this event.
    public func matches(_ request: ServerRequest) -> Bool {
        request.verb == verb && request.pathWithoutQuery == path[...]
    }
}

/// What a listener learns about a push besides its payload.
public struct EventContext: Sendable {
    /// The push's headers, such as `X-Signal-Timestamp`.
    public var headers: RPCHeaders

    /// Creates a context.
    public init(headers: RPCHeaders = [:]) { self.headers = headers }

    /// The server's timestamp header (`X-Signal-Timestamp`, milliseconds) as a date, held
    /// to ``UnixMillisTimestampCodec/maximumMilliseconds`` either side of 1970 as the codec holds one.
    public var serverTimestamp: Date? {
        headers["X-Signal-Timestamp"].flatMap(Int64.init).map { Date(timeIntervalSince1970: Double(UnixMillisTimestampCodec.clamped($0)) / 1000) }
    }
}

/// What the connection should do after dispatching a push.
public enum EventOutcome: Sendable, Equatable {
    /// Answer with this response (200 "OK" for a handled event).
    case acknowledge(RPCResponse)
    /// Send nothing: the connection is going away (a closed bridge, a session that moved
    /// on), so the event stays with the server and comes again on a later connection. A
    /// push left unanswered on a live connection holds back Signal's queue-empty until the
    /// socket closes: for a listener that failed, use ``handlerFailed(reason:)``.
    case withhold(reason: String)
    /// The listener failed (it threw): answer 500, which Signal's server, deleting a stored
    /// message only on a 2xx answer, keeps for a later connection, while the pushes after it
    /// and queue-empty go on; a chat connection reports `reason` to its diagnostics hook
    /// (over gRPC, a push interceptor sees it).
    case handlerFailed(reason: String)
    /// No event of this listener matches: answer 404 and keep the connection.
    case unknown
    /// The push is an event of this listener but its payload does not decode: answer with
    /// `response` (400) and report `reason` where the app sees it (`ChatDiagnostic.undecodablePush`
    /// of a chat connection). Like any answer other than 2xx, Signal's server keeps the
    /// message and sends it again on a later connection, where a newer app may read it.
    case reject(RPCResponse, reason: String)

    /// The answer for an event handled (or received) successfully.
    public static var ok: EventOutcome { .acknowledge(RPCResponse(status: 200, message: "OK")) }
    /// The answer for a push nobody listens to.
    public static var notFound: RPCResponse { RPCResponse(status: 404, message: "Not Found") }
    /// The answer for a push whose listener failed (``handlerFailed(reason:)``).
    public static var internalServerError: RPCResponse { RPCResponse(status: 500, message: "Internal Server Error") }
    /// The answer for a push whose payload does not decode.
    public static var badRequest: RPCResponse { RPCResponse(status: 400, message: "Bad Request") }
}
