import Foundation
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

extension GRPCClientTransport {
    /// Listens to a service's events over gRPC: calls its `SwitchboardEvents` method (a
    /// server-streaming RPC) and hands each push, in order and one at a time, to `onPush`
    /// (pass the generated `dispatch`, as with the WebSocket). An outcome that acknowledges
    /// is sent back through `SwitchboardAcknowledge` with its status; a withheld one is not,
    /// so the server may deliver it again.
    /// - Parameters:
    ///   - service: the service's full name, such as `signal.chat.Messages`.
    ///   - onPush: called for each push in turn; its outcome is the acknowledgement.
    public func subscribe(toEventsOf service: String,
                          onPush: @escaping @Sendable (ServerRequest) async -> EventOutcome) async throws(TransportError) -> GRPCEventSubscription {
        if let metadataProblem { throw metadataProblem }
        let onPush = InterceptorChain.push(options.pushInterceptors, around: onPush)
        // As with a unary call, a stream the server never processed (GOAWAY, REFUSED_STREAM,
        // or the connection going away before the stream opened) is tried once more, on a new
        // connection if this one is going away.
        for attempt in 0..<2 {
            let connection = try await openConnection(deadline: .now.advanced(by: options.connectTimeout)).driver
            let subscription = GRPCEventSubscription(transport: self, service: service, connection: connection, onPush: onPush)
            do throws(TransportError) {
                try await subscription.start(headers: requestHeaders(rpcName: service + "/SwitchboardEvents", deadline: nil, metadata: [:]),
                                             within: options.defaultRequestTimeout)
                return subscription
            } catch {
                guard attempt == 0, subscription.wasNotProcessed else { throw error }
            }
        }
        throw .disconnected(reason: "the server did not process the subscription")
    }
}

/// One open event stream; ``cancel()`` ends it. Pushes reach the handler in the order the
/// server sent them, each after the previous one's handler returned.
public final class GRPCEventSubscription: HTTP2StreamDelegate, @unchecked Sendable {
    /// The service listened to.
    public let service: String
    private let transport: any GRPCAcknowledging
    private let connection: HTTP2ChannelDriver
    private let pushes: AsyncStream<(push: GRPCPush, size: Int)>.Continuation
    /// Bytes that pushes waiting for the handler hold once decoded (see
    /// `DecodedRequestSize`), against `maximumQueuedPushBytes`.
    private let queuedBytes: ByteBudget
    private let consumer: Task<Void, Never>
    /// Set by `cancel()`: pushes still queued are dropped, not handed to the handler.
    private let droppingPushes: Locked<Bool>
    private let lock = AdaptiveLock()
    private var streamID: UInt32?
    private var endReason: String?
    private var endWaiters: [CheckedContinuation<String, Never>] = []
    private var opened: CheckedContinuation<Result<Void, TransportError>, Never>?
    private var openToken: UInt64?
    /// Settled once: the stream opened, or why not (kept if it came before anyone waited).
    private var openOutcome: Result<Void, TransportError>?
    /// The open failed without the server having processed the stream: safe to try again.
    private var notProcessed = false
    /// `GRPCClientOptions.subscriptionLivenessInterval`, and its timer while the stream is open.
    private let livenessInterval: Duration?
    private var livenessTimer: LoopTimer?
    // Loop-confined.
    private var deframer: GRPCMessageDeframer
    /// When the server last sent something on the stream (its opening, then each push).
    private var lastHeard = ContinuousClock.now

    init<Auth: AuthMode>(transport: GRPCClientTransport<Auth>, service: String, connection: HTTP2ChannelDriver,
                         onPush: @escaping @Sendable (ServerRequest) async -> EventOutcome) {
        self.service = service
        self.transport = transport
        self.connection = connection
        livenessInterval = transport.options.subscriptionLivenessInterval
        deframer = GRPCMessageDeframer(maximumMessageSize: transport.options.maximumReceiveMessageSize)
        let (stream, continuation) = AsyncStream<(push: GRPCPush, size: Int)>.makeStream(
            bufferingPolicy: .bufferingOldest(max(1, transport.options.maximumQueuedPushes)))
        pushes = continuation
        let queuedBytes = ByteBudget(limit: transport.options.maximumQueuedPushBytes)
        self.queuedBytes = queuedBytes
        let acknowledger: any GRPCAcknowledging = transport
        let dropping = Locked(false)
        droppingPushes = dropping
        consumer = Task {
            for await (push, size) in stream {
                queuedBytes.give(size)
                // Cancelled by the caller: what was queued is dropped, unacknowledged, so the
                // server delivers it again to whoever subscribes next.
                if dropping.withLock({ $0 }) { continue }
                let outcome = await onPush(push.request)
                // Cancelled while the handler ran: no acknowledgement goes out, so the server
                // keeps the push as unacknowledged and delivers it again (and a send now would
                // open a new connection on a transport closed since).
                if dropping.withLock({ $0 }) || Task.isCancelled { continue }
                switch outcome {
                case let .acknowledge(response), let .reject(response, _):
                    await acknowledger.acknowledge(GRPCPushAcknowledgement(id: push.id, status: response.status), service: service)
                case .unknown:
                    await acknowledger.acknowledge(GRPCPushAcknowledgement(id: push.id, status: EventOutcome.notFound.status), service: service)
                case .handlerFailed:
                    await acknowledger.acknowledge(GRPCPushAcknowledgement(id: push.id, status: EventOutcome.internalServerError.status), service: service)
                case .withhold:
                    break
                }
            }
        }
    }

    /// Opens the stream and waits, at most `timeout` and only while not cancelled, for the
    /// server's response headers; a subscription that does not open is cancelled.
    func start(headers: [HPACKHeader], within timeout: Duration) async throws(TransportError) {
        let timer = connection.loop.schedule(after: timeout) { [weak self] in self?.resolveOpen(.failure(.timeout)) }
        let result: Result<Void, TransportError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // Cancelled or timed out before the wait began: answered at once.
                let early: Result<Void, TransportError>? = lock.withLock {
                    if let openOutcome { return openOutcome }
                    opened = continuation
                    return nil
                }
                if let early {
                    continuation.resume(returning: early)
                    return
                }
                let token = connection.openStream(headers: headers, endStream: true, body: GRPCMessageFramer.frame([]), delegate: self) { [weak self] result in
                    guard let self else { return }
                    switch result {
                    case let .success(id):
                        // Opened after the subscription ended or gave up waiting (cancelled,
                        // timed out): nobody else will reset it, so it is reset here.
                        let unwanted = lock.withLock { () -> Bool in
                            streamID = id
                            if endReason != nil { return true }
                            if case .failure? = openOutcome { return true }
                            return false
                        }
                        if unwanted { connection.resetStream(id, code: .cancel) }
                    case let .failure(error):
                        switch error {
                        case .goingAway:
                            resolveOpen(.failure(.disconnected(reason: DisconnectReason(.goingAway, "\(error)"))), notProcessed: true)
                        case .connectionClosed:
                            // Closed because it went away (a GOAWAY, then nothing left to finish): as going away.
                            let state = connection.state
                            resolveOpen(.failure(.disconnected(reason: DisconnectReason(state.endedGoingAway ? .goingAway : .connectionLost,
                                                                                        state.endReason ?? "\(error)"))), notProcessed: true)
                        default:
                            resolveOpen(.failure(.disconnected(reason: DisconnectReason("\(error)"))))
                        }
                    }
                }
                lock.withLock { openToken = token }
            }
        } onCancel: {
            resolveOpen(.failure(.cancelled))
        }
        timer.cancel()
        if case let .failure(error) = result {
            // Still waiting to open, or open without an answer: neither may linger.
            if let token = lock.withLock({ openToken }) { connection.cancelOpen(token) }
            cancel()
            throw error
        }
        scheduleLivenessCheck()
        connection.whenGoingAway { [weak self] in self?.connectionGoingAway() }
    }

    /// Why a subscription ended when its connection stopped taking new streams (a GOAWAY from
    /// either side): subscribe again, on a new connection.
    public static let connectionGoingAway = "the connection is going away (GOAWAY); subscribe again"

    /// The connection takes no new stream, so an acknowledgement could only go over another
    /// one, where the server does not take it (acknowledgements count only from the
    /// subscriber's own connection) and delivers the push again: the subscription ends here,
    /// leaving what it has not acknowledged to the next one, as ``cancel()`` leaves it.
    private func connectionGoingAway() {
        // A connection that ended outright (not gracefully) ends the stream itself, with its
        // own reason.
        let state = connection.state
        guard !state.isClosed || state.endedGoingAway else { return }
        droppingPushes.withLock { $0 = true }
        end(Self.connectionGoingAway)
        if let id = lock.withLock({ streamID }) { connection.resetStream(id, code: .cancel) }
    }

    /// Once the stream has heard nothing for `livenessInterval`, the connection PINGs the
    /// server (the driver sends none while one is out, and paces those without data
    /// between); the next look is due an interval after the last push.
    private func scheduleLivenessCheck(after delay: Duration? = nil) {
        guard let interval = livenessInterval else { return }
        let next = connection.loop.schedule(after: delay ?? interval) { [weak self] in
            guard let self else { return }
            let quiet = ContinuousClock.now - lastHeard
            if quiet >= interval {
                connection.checkLiveness(for: "PING after \(interval) without a push")
                scheduleLivenessCheck()
            } else {
                scheduleLivenessCheck(after: interval - quiet)
            }
        }
        // Ended meanwhile (its end found no timer to cancel): none is kept.
        let ended = lock.withLock { () -> Bool in
            livenessTimer = endReason == nil ? next : nil
            return endReason != nil
        }
        if ended { next.cancel() }
    }

    /// Bytes the pushes waiting for the handler are counted as holding now, against
    /// `maximumQueuedPushBytes` (for tests).
    var queuedPushBytes: Int { queuedBytes.inUse }

    /// Whether the stream failed to open without the server having processed it.
    var wasNotProcessed: Bool { lock.withLock { notProcessed } }

    private func resolveOpen(_ result: Result<Void, TransportError>, notProcessed: Bool = false) {
        let waiting: CheckedContinuation<Result<Void, TransportError>, Never>? = lock.withLock {
            if openOutcome == nil {
                openOutcome = result
                self.notProcessed = notProcessed
            }
            defer { opened = nil }
            return opened
        }
        waiting?.resume(returning: result)
    }

    /// Stops listening: the stream is reset with CANCEL; pushes not yet handled are dropped,
    /// and the handler running now (its task is cancelled) is not acknowledged: the server
    /// keeps those pushes unacknowledged, to deliver again.
    public func cancel() {
        droppingPushes.withLock { $0 = true }
        consumer.cancel()
        // Ended first, so the reason is the caller's whatever the reset reports back.
        end("cancelled")
        if let id = lock.withLock({ streamID }) { connection.resetStream(id, code: .cancel) }
    }

    /// What ``ended`` says when the server finished the stream with status OK: it ended the
    /// subscription on purpose (a shutdown), not a failure.
    public static let endedByServer = "the server ended the subscription"

    /// Waits until the subscription ends and says why.
    public var ended: String {
        get async {
            await withCheckedContinuation { continuation in
                let reason: String? = lock.withLock {
                    if let endReason { return endReason }
                    endWaiters.append(continuation)
                    return nil
                }
                if let reason { continuation.resume(returning: reason) }
            }
        }
    }

    private func end(_ reason: String) {
        let (waiters, timer): ([CheckedContinuation<String, Never>], LoopTimer?) = lock.withLock {
            guard endReason == nil else { return ([], nil) }
            endReason = reason
            defer { endWaiters = []; livenessTimer = nil }
            return (endWaiters, livenessTimer)
        }
        timer?.cancel()
        pushes.finish()
        resolveOpen(.failure(.disconnected(reason: DisconnectReason(reason))))
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    // MARK: HTTP2StreamDelegate (on the loop)

    /// Why the response headers that open the stream refuse it: a gRPC status other than OK,
    /// an HTTP status other than 200, or a content type that is not gRPC; nil when they open it.
    static func refusal(_ headers: [HPACKHeader], grpcStatus: String?) -> TransportError? {
        func value(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        if let grpcStatus, grpcStatus != "0" {
            let message = value("grpc-message").map(GRPCMetadata.decodeMessage) ?? ""
            // A code this side does not know is UNKNOWN, as on the unary path.
            let code = Int(grpcStatus).flatMap(GRPCStatusCode.init(rawValue:)) ?? .unknown
            return .grpcStatus(code: code.rawValue, message: message,
                               details: value("grpc-status-details-bin").flatMap(GRPCMetadata.decodeBinary))
        }
        if let status = value(":status"), status != "200" {
            return .unexpectedResponse("HTTP status \(status) instead of 200")
        }
        if grpcStatus == nil, !GRPCResponseMapping.isGRPCContentType(value("content-type") ?? "") {
            return .unexpectedResponse("content-type \(value("content-type") ?? "missing") is not gRPC")
        }
        return nil
    }


    public func streamReceived(headers: [HPACKHeader], endStream: Bool) {
        let status = headers.first { $0.name == "grpc-status" }?.value
        let isOpening = lock.withLock { openOutcome == nil }
        if isOpening, let refusal = Self.refusal(headers, grpcStatus: status) {
            // Refused as the stream opened: the caller of `subscribe` gets the server's own
            // answer (UNAUTHENTICATED is not a dropped connection to retry).
            resolveOpen(.failure(refusal))
            if !endStream, let id = lock.withLock({ streamID }) { connection.resetStream(id, code: .cancel) }
        }
        if endStream || status != nil {
            let message = headers.first(where: { $0.name == "grpc-message" }).map { GRPCMetadata.decodeMessage($0.value) }
            end(status == "0" ? Self.endedByServer : "grpc-status \(status ?? "missing")" + (message.map { ": \($0)" } ?? ""))
        } else {
            resolveOpen(.success(()))
        }
    }

    public func streamReceived(data: ArraySlice<UInt8>, endStream: Bool) {
        lastHeard = .now
        do throws(GRPCFramingError) {
            for message in try deframer.append(data) {
                // Counted as what it holds decoded, not its message's size: each header is an
                // entry of two strings (an empty one is 2 bytes on the wire and about 100 here).
                // Charged before it is decoded (its headers counted from its tags), so a push
                // past the limit is never built.
                guard let headerCount = GRPCPush.headerCount(inSerialized: message) else { continue }
                let size = DecodedRequestSize.bytes(envelopeBytes: message.count, headerCount: headerCount)
                // Past either limit a push is dropped unacknowledged: the server sends it again.
                guard queuedBytes.take(size) else { continue }
                guard let push = try? GRPCPush(serializedBytes: message) else {
                    queuedBytes.give(size)
                    continue
                }
                if case .dropped = pushes.yield((push, size)) { queuedBytes.give(size) }
            }
        } catch {
            if let id = lock.withLock({ streamID }) { connection.resetStream(id, code: .cancel) }
            end("\(error)")
        }
    }

    public func streamClosed(_ closure: HTTP2StreamClosure) {
        // Before it opened, a stream the server never processed is reported as such (and
        // `subscribe` tries once more); `resolveOpen` keeps only the first outcome.
        if closure.isSafeToRetry {
            resolveOpen(.failure(.disconnected(reason: DisconnectReason(.goingAway, "the server did not process the subscription (\(closure))"))),
                        notProcessed: true)
        }
        end("\(closure)")
    }
}

/// Sends acknowledgements; a protocol so the subscription need not know the transport's `Auth`.
protocol GRPCAcknowledging: Sendable {
    func acknowledge(_ acknowledgement: GRPCPushAcknowledgement, service: String) async
}

extension GRPCClientTransport: GRPCAcknowledging {
    func acknowledge(_ acknowledgement: GRPCPushAcknowledgement, service: String) async {
        var request = RPCRequest(endpoint: EndpointDescriptor(rpcName: service + "/SwitchboardAcknowledge", verb: "POST", pathTemplate: "", auth: .none),
                                 path: "", deadline: .now.advanced(by: defaultRequestTimeout))
        request.messageBytes = Data(acknowledgement.serializedBytes())
        _ = try? await send(request)
    }
}
