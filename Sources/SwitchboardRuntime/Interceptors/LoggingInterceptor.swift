import Foundation

/// Logs every call, served request and push, without secrets: paths in their log-safe
/// form (a server logs the endpoint's template), header values only for names known to be
/// harmless (``LogRedaction``), and bodies as sizes, or with ``Detail/bodies`` as the decoded
/// message with every `@sensitive` field redacted.
///
/// It is a client, server and push interceptor at once; the same value can be put in each
/// chain. Records go to `sink`, which adapts them to the app's logger:
///
/// ```swift
/// let logging = LoggingInterceptor { record in logger.log(level: record.level == .warning ? .warning : .info, "\(record)") }
/// ```
public struct LoggingInterceptor: ClientInterceptor, ServerInterceptor, PushInterceptor {
    /// How much of a body is written.
    public enum Detail: Sendable, Hashable {
        /// Heads only: the body's size.
        case heads
        /// Heads and each body decoded as its endpoint's message (``EndpointDescriptor/requestBodyType``),
        /// `@sensitive` fields redacted; a body that does not decode is shown by its size.
        case bodies
    }

    /// One logged line.
    public struct Record: Sendable, Hashable, CustomStringConvertible {
        /// How much a record matters.
        public enum Level: String, Sendable, Hashable {
            /// A call or request on its way, and a successful answer.
            case info
            /// A failure, a status of 400 or more, or a push withheld or rejected.
            case warning
        }

        /// What happened.
        public enum Event: String, Sendable, Hashable {
            /// A client call sent: its verb, path, headers and body.
            case callStarted
            /// A client call answered: the status, the time it took and the response.
            case callFinished
            /// A client call that ended in a ``TransportError`` instead of a response.
            case callFailed
            /// A request served: the request and the response in one record.
            case requestServed
            /// A push received: its payload and whether it was acknowledged, withheld, unknown or rejected.
            case pushHandled
        }

        /// How much the record matters.
        public var level: Level
        /// What happened.
        public var event: Event
        /// The endpoint's RPC name, or the push's verb and the matched event's path (the push's
        /// path's size when no event in ``LoggingInterceptor/init(detail:events:sink:)`` matches).
        public var subject: String
        /// The rest of the line, already redacted.
        public var details: String

        /// Creates a record.
        public init(level: Level, event: Event, subject: String, details: String) {
            self.level = level
            self.event = event
            self.subject = subject
            self.details = details
        }

        /// `event subject details`.
        public var description: String { "\(event.rawValue) \(subject) \(details)" }
    }

    let detail: Detail
    let events: [EventDescriptor]
    let sink: @Sendable (Record) -> Void

    /// Logs to `sink` with `detail`; `events` (a service's ``ServiceDescriptor/events``)
    /// name pushes by their event's path (any other push is logged with its path's size
    /// only) and let ``Detail/bodies`` decode push payloads too.
    public init(detail: Detail = .heads, events: [EventDescriptor] = [], sink: @escaping @Sendable (Record) -> Void) {
        self.detail = detail
        self.events = events
        self.sink = sink
    }

    // MARK: Client

    public func intercept(
        _ request: RPCRequest, next: @Sendable (RPCRequest) async throws(TransportError) -> RPCResponse
    ) async throws(TransportError) -> RPCResponse {
        let subject = request.endpoint.rpcName
        let encoding = Self.encoding(request.headers["Content-Type"] ?? request.headers["Accept"])
        sink(Record(level: .info, event: .callStarted, subject: subject,
                    details: "\(request.verb) \(request.logSafePath) headers: \(request.headers) body: \(body(request.body, as: request.endpoint.requestBodyType, encoding: encoding))"))
        let start = ContinuousClock.now
        do {
            let response = try await next(request)
            let elapsed = Self.format(ContinuousClock.now - start)
            let responseEncoding = Self.encoding(response.headers["Content-Type"] ?? request.headers["Accept"])
            let type = response.isSuccess ? request.endpoint.responseBodyType : nil
            sink(Record(level: response.status >= 400 ? .warning : .info, event: .callFinished, subject: subject,
                        details: "\(Self.status(response)) in \(elapsed) headers: \(response.headers) body: \(body(response.body, as: type, encoding: responseEncoding))"))
            return response
        } catch {
            sink(Record(level: .warning, event: .callFailed, subject: subject,
                        details: "after \(Self.format(ContinuousClock.now - start)): \(error)"))
            throw error
        }
    }

    // MARK: Server

    public func intercept(
        _ request: ServerRequest, context: ServerContext,
        next: @Sendable (ServerRequest, ServerContext) async -> RPCResponse
    ) async -> RPCResponse {
        let start = ContinuousClock.now
        let response = await next(request, context)
        let elapsed = Self.format(ContinuousClock.now - start)
        // The template, never the path: a server's path holds whatever values the client sent.
        let subject = context.endpoint?.rpcName ?? request.verb
        let route = "\(request.verb) \(context.endpoint?.pathTemplate ?? "(\(request.path.utf8.count) bytes)")"
        let requestEncoding = Self.encoding(request.headers["Content-Type"])
        let responseEncoding = Self.encoding(response.headers["Content-Type"] ?? request.headers["Accept"])
        let responseType = response.isSuccess ? context.endpoint?.responseBodyType : nil
        sink(Record(level: response.status >= 400 ? .warning : .info, event: .requestServed, subject: subject,
                    details: "\(route) headers: \(request.headers) body: \(body(request.body, as: context.endpoint?.requestBodyType, encoding: requestEncoding))"
                        + " -> \(Self.status(response)) in \(elapsed) body: \(body(response.body, as: responseType, encoding: responseEncoding))"))
        return response
    }

    // MARK: Push

    public func intercept(_ push: ServerRequest, next: @Sendable (ServerRequest) async -> EventOutcome) async -> EventOutcome {
        let outcome = await next(push)
        let event = events.first { $0.matches(push) }
        // The matched event's path, never the push's: a path no event matches may hold any
        // value the server put there, so only its size is logged (as a server's request is).
        let subject = "\(push.verb) \(event?.path ?? "(\(push.path.utf8.count) bytes)")"
        let encoding = Self.encoding(push.headers["Content-Type"])
        let pushed = "headers: \(push.headers) body: \(body(push.body, as: event?.payloadType, encoding: encoding))"
        switch outcome {
        case let .acknowledge(response):
            sink(Record(level: response.status >= 400 ? .warning : .info, event: .pushHandled, subject: subject,
                        details: "\(pushed) -> \(Self.status(response))"))
        case let .withhold(reason):
            sink(Record(level: .warning, event: .pushHandled, subject: subject, details: "\(pushed) -> withheld for redelivery: \(reason)"))
        case let .handlerFailed(reason):
            sink(Record(level: .warning, event: .pushHandled, subject: subject, details: "\(pushed) -> listener failed, answered 500: \(reason)"))
        case .unknown:
            sink(Record(level: .warning, event: .pushHandled, subject: subject, details: "\(pushed) -> no listener (404)"))
        case let .reject(response, reason):
            sink(Record(level: .warning, event: .pushHandled, subject: subject,
                        details: "\(pushed) -> rejected with \(Self.status(response)): \(reason)"))
        }
        return outcome
    }

    // MARK: Formatting

    func body(_ data: Data?, as type: (any ProtoMessage.Type)?, encoding: BodyEncoding) -> String {
        guard let data else { return "none" }
        guard detail == .bodies, let type, let message = try? type.init(decoding: data, encoding: encoding) else {
            return LogRedaction.body(data.count)
        }
        // Generated messages describe themselves with `@sensitive` values redacted.
        return String(describing: message)
    }

    static func encoding(_ contentType: String?) -> BodyEncoding {
        contentType?.lowercased().contains("json") == true ? .json : .protobuf
    }

    static func status(_ response: RPCResponse) -> String {
        "\(response.status)" + (response.message.map { " \($0)" } ?? "")
    }

    static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return milliseconds < 10 ? String(format: "%.2f ms", milliseconds) : String(format: "%.0f ms", milliseconds)
    }
}
