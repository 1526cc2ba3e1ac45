import Foundation
internal import SwitchboardThreads
import SwitchboardDynamic
import SwitchboardHTTPSyntax
import SwitchboardRuntime
import SwitchboardSchema

/// A narrow, string-based API over a schema's whole service surface, for an app core behind
/// an FFI (the SimpleX mobile design): `send` takes a REST-style command and answers with a
/// JSON document; `receive` hands over the next pushed event from an ordered queue.
///
/// The bridge is driven by the schema at run time (the `SwitchboardDynamic` codec) rather than by
/// generated code: its callers have no Swift types, only strings, so typed code would add
/// nothing they can use, while one compiled library serves any schema and any schema version
/// the core ships. The dynamic codec checks every body against the schema as strictly as the
/// generated one does.
///
/// Requests go through ``Transports``: the chat connection, a gRPC channel, or in-process
/// handlers, whatever the host configures. Pushes reach the queue through ``deliver(_:)``,
/// which the host installs as the connections' push handler.
public final class StringBridge: Sendable {
    /// The library's version and its C ABI's (`SWITCHBOARD_ABI_VERSION` in `switchboard.h`).
    public static let version = "0.1.0 (abi 1)"
    /// Limits, each with a safe default.
    public struct Options: Sendable {
        /// The largest JSON body a command may carry: 1 MiB.
        public var maxRequestBytes = 1 << 20
        /// What a request may carry besides its body (verb, path, query, header lines): 64 KiB.
        /// The C functions read no further into a string than the two limits together.
        public var maxRequestHeadBytes = 64 << 10
        /// The most header lines a command may carry: 100.
        public var maxHeaderLines = 100
        /// How many pushes wait for the host at most: 1,000. Past it, the connections wait
        /// (and the server with them) instead of the queue growing.
        public var maxQueuedEvents = 1_000
        /// How many bytes of event documents wait for the host at most: 64 MiB. Past it, the
        /// connections wait too. A push acknowledged on receipt is freed from the connection's
        /// own budget once queued here, and its JSON document can be several times its size on
        /// the wire (bytes in base64, control characters escaped), so the count alone let a
        /// host that stopped taking events hold gigabytes. One document larger than this still
        /// passes when nothing else waits.
        public var maxQueuedEventBytes = 64 << 20
        /// The deadline of a call whose endpoint sets none; `nil` leaves it to the transport (30 s).
        public var requestTimeout: Duration?

        /// The defaults.
        public init() {}
    }

    /// The connections requests go through: an endpoint of an `auth account` service uses
    /// `authenticated`, one of an `auth none` service `unauthenticated`.
    public struct Transports: Sendable {
        /// The unauthenticated connection, if any.
        public var unauthenticated: (any RPCTransport<Unauthenticated>)?
        /// The authenticated connection, if any.
        public var authenticated: (any RPCTransport<Authenticated>)?

        /// Both kinds of connection, either optional.
        public init(unauthenticated: (any RPCTransport<Unauthenticated>)? = nil, authenticated: (any RPCTransport<Authenticated>)? = nil) {
            self.unauthenticated = unauthenticated
            self.authenticated = authenticated
        }
    }

    /// The schema the bridge serves.
    public let schema: Schema
    /// The limits in force.
    public let options: Options
    let transports: Transports
    let router: BridgeRouter
    let events: BridgeEventQueue
    let closing: Locked<(@Sendable () async -> Void)?>

    /// A bridge for `schema` over `transports`. `onClose` runs once when the bridge closes
    /// (to close connections the bridge owns).
    public init(schema: Schema, transports: Transports, options: Options = Options(), onClose: @escaping @Sendable () async -> Void = {}) {
        self.schema = schema
        self.options = options
        self.transports = transports
        router = BridgeRouter(schema: schema)
        events = BridgeEventQueue(capacity: options.maxQueuedEvents, byteCapacity: options.maxQueuedEventBytes)
        closing = Locked(onClose)
    }

    // MARK: Requests

    /// Sends `verb path?query` with a JSON `body` (empty for none) and answers with a JSON
    /// document (see docs/bridge.md). Never throws: every problem is a document.
    public func send(verb: String, path: String, query: String = "", body: String = "") async -> String {
        await send(BridgeCommand(verb: verb, path: path, query: query, body: Data(body.utf8)))
    }

    /// Sends a command in the one-string form (``BridgeCommand/init(parsing:)``).
    public func send(command: String) async -> String {
        do throws(BridgeError) {
            return await send(try BridgeCommand(parsing: command, maximumHeadBytes: options.maxRequestHeadBytes, maximumHeaderLines: options.maxHeaderLines))
        } catch {
            return BridgeDocument.error(error)
        }
    }

    /// Sends a parsed command.
    public func send(_ command: BridgeCommand) async -> String {
        let prepared: (DynamicEndpoint, RPCRequest)
        do throws(BridgeError) {
            prepared = try prepare(command)
        } catch {
            return BridgeDocument.error(error)
        }
        let (endpoint, request) = prepared
        // The endpoint's own timeout wins; the bridge's is for endpoints that set none.
        let callOptions = CallOptions(timeout: request.endpoint.defaultTimeout ?? options.requestTimeout)
        let result: Result<RPCResponse, TransportError>
        if endpoint.requiresAccount {
            guard let transport = transports.authenticated else {
                return BridgeDocument.error(BridgeError(.notConnected, "\(endpoint.service.name) needs an authenticated connection, and none is configured"))
            }
            result = await RPCCall.send(request, over: transport, options: callOptions)
        } else {
            guard let transport = transports.unauthenticated else {
                return BridgeDocument.error(BridgeError(.notConnected, "\(endpoint.service.name) needs an unauthenticated connection, and none is configured"))
            }
            result = await RPCCall.send(request, over: transport, options: callOptions)
        }
        switch result {
        case let .failure(error): return BridgeDocument.failure(error)
        case let .success(response): return Self.document(for: response, endpoint: endpoint)
        }
    }

    /// Routes and binds a command into the request the endpoint's generated client would send.
    func prepare(_ command: BridgeCommand) throws(BridgeError) -> (DynamicEndpoint, RPCRequest) {
        guard closing.withLock({ $0 != nil }) else { throw BridgeError(.closed, "the bridge is closed") }
        guard command.body.count <= options.maxRequestBytes else {
            throw BridgeError(.tooLarge, "the body has \(command.body.count) bytes; the limit is \(options.maxRequestBytes)")
        }
        guard command.headers.fields.count <= options.maxHeaderLines else {
            throw BridgeError(.tooLarge, "the command has \(command.headers.fields.count) header lines; the limit is \(options.maxHeaderLines)")
        }
        // Keys by header (`Unidentified-Access-Key`) or schema name (`accessKey`).
        var keys: [String: String] = [:]
        var otherHeaders = RPCHeaders()
        for header in command.headers {
            // A name HTTP cannot carry is refused here, not dropped on the way. (Over gRPC,
            // names gRPC reserves, `grpc-*` and the connection's own, are left out of the
            // metadata, and one it cannot spell fails the call; docs/bridge.md says so.)
            guard HTTPSyntax.isToken(header.name), HTTPSyntax.isFieldValue(header.value) else {
                throw BridgeError(.badCommand, "'\(header.name.prefix(100))' is not a valid header name, or its value holds control characters")
            }
            if let key = schema.keys.first(where: { $0.header.lowercased() == header.name.lowercased() || $0.name == header.name }) {
                keys[key.name] = header.value
            } else {
                otherHeaders.add(header.name, header.value)
            }
        }
        let (endpoint, parameters) = try router.route(verb: command.verb, path: command.path, keys: Set(keys.keys))
        if !DynamicEndpointBody.isBlank(command.body), (try? JSONSerialization.jsonObject(with: command.body, options: [.fragmentsAllowed])) == nil {
            throw BridgeError(.badJSON, "the body is not JSON")
        }
        var request: RPCRequest
        do throws(DynamicCodecError) {
            let message = try endpoint.requestMessage(pathParameters: parameters, query: command.query[...], headers: otherHeaders, jsonBody: command.body)
            request = try endpoint.request(from: message, keys: keys)
        } catch {
            throw BridgeError(.schemaViolation, error.message)
        }
        let bound = Set(endpoint.endpoint.headers.map { $0.name.lowercased() })
        for header in otherHeaders where !bound.contains(header.name.lowercased()) { request.headers.add(header.name, header.value) }
        return (endpoint, request)
    }

    /// The document for a response, mapped as a generated client maps it: 2xx is success, a
    /// declared status the endpoint's error, 429 and 5xx transport failures, other statuses
    /// `unrecognized`. Bodies are read as generated clients read them: JSON members and enum
    /// names the schema does not know are skipped (``DynamicEndpoint/outcome(of:)``).
    static func document(for response: RPCResponse, endpoint: DynamicEndpoint) -> String {
        let codec = DynamicJSONCodec(schema: endpoint.schema)
        let outcome: DynamicEndpoint.Outcome
        do throws(DynamicCodecError) {
            outcome = try endpoint.outcome(of: response)
        } catch {
            return BridgeDocument.failure(.undecodableResponse(error.message))
        }
        switch outcome {
        case let .success(message):
            return BridgeDocument.success(status: response.status, result: message.map { codec.encode($0, prettyPrinted: false) })
        case let .declaredError(name, status, body, retryAfter):
            return BridgeDocument.nonSuccess(status: status, error: name, body: body.map { codec.encode($0, prettyPrinted: false) }, retryAfter: retryAfter)
        case let .undeclaredStatus(status, body):
            switch status {
            case 429: return BridgeDocument.failure(.retryLater(retryAfter: response.retryAfter()))
            case 503 where response.headers["Retry-After"] != nil: return BridgeDocument.failure(.retryLater(retryAfter: response.retryAfter()))
            case 500..<600: return BridgeDocument.failure(.serverError(status: status))
            case 100..<200, 300..<400: return BridgeDocument.failure(.unexpectedResponse("status \(status)"))
            default: return BridgeDocument.nonSuccess(status: status, error: "unrecognized", body: nil, bodyBytes: body, retryAfter: nil)
            }
        }
    }

    // MARK: Events

    /// The push handler to give the connections: it queues each push of the schema's events
    /// as an event document, in order, and acknowledges it as the schema says: `ack onReceipt`
    /// once queued, `ack afterHandling` once the host has taken it. A push the host never
    /// takes is withheld so the server delivers it again: because the bridge closed, or
    /// because the handler's task was cancelled first (the connection ended or was cut off
    /// while the push waited for room or for the host; it is withdrawn from the queue, so the
    /// host never sees an event whose acknowledgement could not be sent).
    public func deliver(_ push: ServerRequest) async -> EventOutcome {
        for service in schema.services {
            for event in service.events where event.verb == push.verb && event.path[...] == push.pathWithoutQuery {
                var payload: String?
                if let type = event.payload {
                    let declared: BodyEncoding = service.encoding == .json ? .json : .protobuf
                    let encoding = push.headers["Content-Type"].flatMap(BodyEncoding.init(contentType:)) ?? declared
                    let body = push.body ?? Data()
                    do throws(DynamicCodecError) {
                        // Leniently, as a generated event handler reads it: a server on a newer
                        // schema may add members or enum names.
                        let message = encoding == .json
                            ? try DynamicJSONCodec.lenient(schema: schema).decode(body.isEmpty ? Data("{}".utf8) : body, as: type)
                            : try DynamicBinaryCodec(schema: schema).decode(body, as: type)
                        payload = DynamicJSONCodec(schema: schema).encode(message, prettyPrinted: false)
                    } catch {
                        return .reject(EventOutcome.badRequest, reason: "\(service.name).\(event.name): \(error.message)")
                    }
                }
                let document = BridgeDocument.event(service: service.name, event: event.name, payload: payload, headers: push.headers)
                let handedOver = await events.put(document, waitUntilTaken: event.acknowledgement == .afterHandling)
                if handedOver { return .ok }
                let reason = Task.isCancelled ? "the push handler was cancelled before the host took the event" : "the bridge closed before the host took the event"
                return .withhold(reason: reason)
            }
        }
        return .unknown
    }

    /// The next event document, waiting at most `timeout` (`nil`: until one arrives or the
    /// bridge closes); `nil` when the time ran out; the closed document `{"type":"closed"}` once closed.
    /// It blocks the calling thread, as a foreign core's receive loop wants; from Swift
    /// concurrency use ``receive(timeout:)``.
    public func receiveBlocking(timeout: Duration?) -> String? {
        receiveBlocking(timeout: timeout, cancellation: nil)
    }

    private func receiveBlocking(timeout: Duration?, cancellation: BridgeEventQueue.TakeCancellation?) -> String? {
        let deadline = timeout.map { ContinuousClock.now + max($0, .zero) }
        switch events.take(until: deadline, cancellation: cancellation) {
        case let .event(document): return document
        case .timedOut: return nil
        case .closed: return BridgeDocument.closed
        }
    }

    /// ``receiveBlocking(timeout:)`` without holding a thread of Swift's cooperative pool.
    /// Cancelling the task returns `nil` at once, and takes no event (it stays for the next
    /// receive).
    public func receive(timeout: Duration?) async -> String? {
        let cancellation = BridgeEventQueue.TakeCancellation()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                do throws(SystemThread.StartError) {
                    try SystemThread.start(stackSize: 1 << 20) { [self] in
                        continuation.resume(returning: receiveBlocking(timeout: timeout, cancellation: cancellation))
                    }
                } catch {
                    // No thread to wait on (the system's thread limit): wait here rather than
                    // never answer, as a Foundation thread refused this way did.
                    continuation.resume(returning: receiveBlocking(timeout: timeout, cancellation: cancellation))
                }
            }
        } onCancel: {
            events.cancel(cancellation)
        }
    }

    /// Queues a `disconnected` document for a connection that ended while the bridge is open.
    func connectionEnded(_ connection: String, reason: String) {
        guard closing.withLock({ $0 != nil }) else { return }
        let document = BridgeDocument.disconnected(connection: connection, reason: reason)
        Task { _ = await events.put(document, waitUntilTaken: false) }
    }

    // MARK: Closing

    /// Closes the bridge: later commands answer `closed`, waiting receives return the
    /// closed document, untaken events are dropped (those acknowledged after handling are
    /// withheld, so the server keeps them), then `onClose` runs.
    public func close() async {
        guard let onClose = closing.withLock({ current -> (@Sendable () async -> Void)? in
            defer { current = nil }
            return current
        }) else { return }
        events.close()
        await onClose()
    }
}

/// Blank-body detection shared by the bridge's checks.
enum DynamicEndpointBody {
    static func isBlank(_ body: Data) -> Bool {
        body.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    }
}
