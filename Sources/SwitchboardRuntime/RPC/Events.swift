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

    /// The server's timestamp header (`X-Signal-Timestamp`, milliseconds) as a date.
    public var serverTimestamp: Date? {
        headers["X-Signal-Timestamp"].flatMap(Int64.init).map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }
}

/// What the connection should do after dispatching a push.
public enum EventOutcome: Sendable, Equatable {
    /// Answer with this response (200 "OK" for a handled event).
    case acknowledge(RPCResponse)
    /// Send nothing: the listener failed, so the server keeps the event and redelivers it.
    case withhold(reason: String)
    /// No event of this listener matches: answer 404 and keep the connection.
    case unknown
    /// The push is an event of this listener but its payload does not decode: answer with
    /// `response` (400, so the server does not redeliver what can never be read) and report
    /// `reason` where the app sees what was dropped (`ChatDiagnostic.undecodablePush` of a chat connection).
    case reject(RPCResponse, reason: String)

    /// The answer for an event handled (or received) successfully.
    public static var ok: EventOutcome { .acknowledge(RPCResponse(status: 200, message: "OK")) }
    /// The answer for a push nobody listens to.
    public static var notFound: RPCResponse { RPCResponse(status: 404, message: "Not Found") }
    /// The answer for a push whose payload does not decode.
    public static var badRequest: RPCResponse { RPCResponse(status: 400, message: "Bad Request") }
}
