import Foundation
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// One call a ``GRPCServer`` serves: reads the request message, runs the route in a task
/// bounded by the call's deadline, and answers with the message and `grpc-status`, or with
/// a trailers-only status. The client's RST_STREAM cancels the task.
final class GRPCServerCall: HTTP2StreamDelegate, @unchecked Sendable {
    private let streamID: UInt32
    private let connection: HTTP2ChannelDriver
    /// The connection's acceptor: the server's router, options, event hub and byte budget,
    /// shared by its calls (holding each apart cost a call a copy of the options and four
    /// retains).
    private let server: GRPCStreamAcceptor
    private var router: RPCRouter { server.router }
    private var hub: GRPCEventHub { server.hub }
    private var budget: ByteBudget { server.budget }
    // Stored state below is reached only under its lock or on the loop's thread, which
    // already makes each access exclusive: `@exclusivity(unchecked)` drops the runtime's own
    // check, about 80 instructions an access and 5% of a call (docs/performance.md).
    @exclusivity(unchecked) private var subscriber: GRPCEventSubscriber?
    /// What the request's headers say (shared by calls that sent the same list).
    private let request: GRPCRequestReading
    private var method: GRPCMethod? { request.method }
    private var isJSON: Bool { request.isJSON }
    private var headerProblem: (status: GRPCStatusCode, message: String)? { request.headerProblem }
    private var contentTypeHeader: HPACKHeader { request.contentTypeHeader }
    private var metadata: RPCHeaders { request.metadata }
    private let deadline: ContinuousClock.Instant
    @exclusivity(unchecked) private var deframer: GRPCMessageDeframer
    /// The request message and how many came: a slice of the connection's read buffer only
    /// from its DATA frame with END_STREAM until `requestEnded` takes it, else a copy.
    @exclusivity(unchecked) private var message: ArraySlice<UInt8>?
    @exclusivity(unchecked) private var messageCount = 0
    /// The server's bytes of requests in progress, and what this call has taken of them (on
    /// the loop; given back when the stream closes).
    @exclusivity(unchecked) private var taken = 0
    /// What a call counts for before its first byte, besides its header list: its stream and
    /// bookkeeping.
    static let minimumCost = 1024
    /// Whether the call's opening cost (``minimumCost`` and its header list) fit in the budget
    /// when its stream opened. One that did not is answered RESOURCE_EXHAUSTED by `begin`,
    /// its request never read (on the loop).
    @exclusivity(unchecked) private var isAdmitted = false

    /// When the request must have arrived in full by.
    private let receiveDeadline: ContinuousClock.Instant

    /// The connection's lock for its streams' own state: one per connection, not one per call.
    private var lock: AdaptiveLock { connection.streamStateLock }
    @exclusivity(unchecked) private var task: Task<Void, Never>?
    /// What the handler's task answers through; let go when the stream closes.
    @exclusivity(unchecked) private var responder: GRPCCallResponder?
    @exclusivity(unchecked) private var isAnswered = false
    /// The stream is over (answered and sent, or reset): the timer has nothing left to guard.
    @exclusivity(unchecked) private var isClosed = false
    /// Fires at the receive deadline while the request arrives, then at the call's deadline;
    /// after an answer it stays until the stream closes, so an answer a client never takes
    /// (it withholds its flow-control window) cannot hold the stream for ever.
    @exclusivity(unchecked) private var timer: LoopTimer?
    @exclusivity(unchecked) private var timerIsForReceiving = false

    /// Called on the connection's loop (where `server`'s method cache and readings are used).
    init(streamID: UInt32, headers: [HPACKHeader], connection: HTTP2ChannelDriver, server: GRPCStreamAcceptor) {
        self.streamID = streamID
        self.connection = connection
        self.server = server
        deframer = GRPCMessageDeframer(maximumMessageSize: server.options.maximumReceiveMessageSize)
        request = server.readings.reading(of: headers, methods: server.methods)
        // Charged as the stream opens, before any of its DATA is read (`begin` runs later, and
        // a request that came in the same read would otherwise be served, a subscription
        // opened, before the charge could refuse it). The header list counts as well as the
        // message: the call holds its metadata until its stream closes (a subscription for as
        // long as it lasts), up to the connection's MAX_HEADER_LIST_SIZE (16 KiB) a call. The
        // stream's close gives it back (the driver closes every stream it accepted).
        let openingCost = GRPCServerCall.minimumCost + request.headerListSize
        if server.budget.take(openingCost) {
            taken = openingCost
            isAdmitted = true
        }
        let now = ContinuousClock.now
        deadline = now.advanced(by: min(request.timeout ?? server.options.defaultCallTimeout, server.options.maximumCallTimeout))
        receiveDeadline = now.advanced(by: server.options.requestReceiveTimeout)
    }

    static let protobufOKHeaders = [HPACKHeader(":status", "200"), GRPCMetadata.protobufContentType]
    static let okTrailers = [HPACKHeader("grpc-status", "0")]

    /// Starts the deadline; a request that is not gRPC is answered at once.
    func begin() {
        guard isAdmitted else {
            answer(status: .resourceExhausted, message: Self.overBudgetMessage)
            return
        }
        guard let method else {
            answer(status: .unimplemented, message: "not a gRPC request (POST with content-type application/grpc, +proto or +json)",
                   httpStatus: request.nonGRPCStatus ?? 415)
            return
        }
        if let headerProblem {
            answer(status: headerProblem.status, message: headerProblem.message)
            return
        }
        // Event streams live until the client leaves, once their request has come;
        // acknowledgements are answered at once.
        let isEvents: Bool
        switch method.kind {
        case .events, .acknowledge: isEvents = true
        case .message: isEvents = false
        case let .noEvents(service):
            // As an unknown method (the 404 too): the server was told which services have
            // events, and this is not one of them. Before any subscriber is surfaced: a
            // request that came in the read that opened the stream did not subscribe either
            // (`requestEnded` leaves this kind to `begin`).
            let limit = max(16, server.options.maximumErrorMessageBytes)
            answer(status: .unimplemented,
                   message: GRPCMetadata.truncated("unknown method \(method.rpcName): this server has no events for service '\(service)'", toBytes: limit),
                   extra: [HPACKHeader(GRPCResponseMapping.statusTrailer, "404")])
            return
        case .unknown:
            // With the 404 a path no route serves gets over the WebSocket, so a Switchboard
            // client reads the same typed result on both transports.
            answer(status: .unimplemented, message: "unknown method \(method.rpcName)",
                   extra: [HPACKHeader(GRPCResponseMapping.statusTrailer, "404")])
            return
        }
        // Answered and closed meanwhile (its request arrived in the same read, and the handler
        // did not suspend), or subscribed already (a subscription has no deadline): no timer.
        let (closed, answered, started) = lock.withLock { (isClosed, isAnswered, task != nil) }
        if closed || (isEvents && answered) { return }
        let receiving = !answered && !started && (isEvents || receiveDeadline < deadline)
        // Held strongly: the timer is cancelled (its closure released) when the stream closes,
        // and a weak reference would give the call a side table (see `GRPCCallResponder`).
        let timer = connection.loop.schedule(at: receiving ? receiveDeadline : deadline) { self.timerFired() }
        let closedMeanwhile = lock.withLock {
            if !isClosed {
                self.timer = timer
                timerIsForReceiving = receiving
            }
            return isClosed
        }
        if closedMeanwhile { timer.cancel() }
    }

    /// On the loop, at the timer's instant.
    private func timerFired() {
        let (receiving, answered) = lock.withLock { (timerIsForReceiving, isAnswered) }
        if !answered {
            answer(status: .deadlineExceeded, message: receiving ? "the request did not arrive within the receive timeout" : "the deadline passed")
        } else if !lock.withLock({ isClosed }) {
            // Answered, but the client has not taken the answer by the deadline.
            connection.resetStream(streamID, code: .cancel)
        }
    }

    /// The request has arrived: the timer now guards the call's deadline.
    private func requestArrived() {
        let previous: LoopTimer? = lock.withLock {
            guard timerIsForReceiving, !isClosed else { return nil }
            timerIsForReceiving = false
            defer { self.timer = nil }
            return self.timer
        }
        guard let previous else { return }
        previous.cancel()
        let timer = connection.loop.schedule(at: deadline) { self.timerFired() }
        let closed = lock.withLock {
            if !isClosed { self.timer = timer }
            return isClosed
        }
        if closed { timer.cancel() }
    }

    // MARK: HTTP2StreamDelegate (on the loop)

    func streamReceived(headers: [HPACKHeader], endStream: Bool) {
        // Request trailers: nothing in them matters for a unary call, but a message cut short
        // before them does. A call refused at its opening is answered by `begin` alone.
        guard endStream, isAdmitted else { return }
        do throws(GRPCFramingError) {
            try deframer.finish()
        } catch {
            answer(status: error.code, message: error.description)
            return
        }
        requestEnded()
    }

    func streamReceived(data: ArraySlice<UInt8>, endStream: Bool) {
        // Answered for a second message already: what else the client sends is dropped, so a
        // unary call holds one message at most, however long the client keeps sending. A
        // request refused on its headers, or past the budget as it opened, is not read at all
        // (`begin` answers it).
        guard isAdmitted, messageCount <= 1, request.isServable else { return }
        // Counted as it arrives, before the deframer holds it.
        guard charge(data.count) else { return }
        do throws(GRPCFramingError) {
            try deframer.append(data) { (next: ArraySlice<UInt8>) throws(GRPCFramingError) in
                // `data` is the connection's read buffer: a message that waits for a later
                // frame's END_STREAM is copied once (the next read then need not copy the whole
                // buffer); with END_STREAM here, `requestEnded` takes it before this returns.
                if messageCount == 0 { message = endStream ? next : ArraySlice(Array(next)) }
                messageCount += 1
            }
            if messageCount > 1 {
                answer(status: .internal, message: "a unary call needs exactly one request message, not more")
                return
            }
            if endStream {
                try deframer.finish()
                requestEnded()
            }
        } catch {
            if error == .unexpectedCompression, let unsupportedEncoding = request.unsupportedEncoding {
                // Compressed with an algorithm this server does not offer (gRPC's rule).
                answer(status: .unimplemented, message: "grpc-encoding '\(unsupportedEncoding)' is not supported; this server accepts identity",
                       extra: [HPACKHeader("grpc-accept-encoding", "identity")])
            } else {
                answer(status: error.code, message: error.description)
            }
        }
    }

    func streamClosed(_ closure: HTTP2StreamClosure) {
        subscriber?.ended("\(closure)")
        // The client went away (RST_STREAM, or the connection ended): stop the work.
        let (task, timer, released, freed) = lock.withLock { () -> (Task<Void, Never>?, LoopTimer?, GRPCServerCall?, Int) in
            isAnswered = true
            isClosed = true
            // A handler still running keeps the request's bytes charged until it returns.
            let freed = responder?.streamClosedUnderLock(taken: taken) ?? taken
            taken = 0
            defer {
                self.timer = nil
                self.responder = nil
            }
            return (self.task, self.timer, self.responder?.releaseUnderLock(), freed)
        }
        budget.give(freed)
        // Cancelling releases the timer's closure, and with it the call. `released` (the
        // responder's reference, handed out of the lock) goes at the end of this scope.
        timer?.cancel()
        task?.cancel()
        withExtendedLifetime(released) {}
    }

    private func requestEnded() {
        // The reading once, its parts borrowed from it: each use of the computed properties
        // copied the method (its name and route) or the header problem again.
        let request = self.request
        guard request.isServable, !lock.withLock({ isAnswered }) else { return }
        guard messageCount == 1 else {
            answer(status: .internal, message: "a unary call needs exactly one request message, not \(messageCount)")
            return
        }
        // Taken already: the handler has it.
        guard let message else { return }
        // Dropped at once, whatever serves it: it may be a slice of the connection's read
        // buffer, which a subscription (held for as long as it lasts) would otherwise pin.
        self.message = nil
        switch request.method?.kind {
        case let .events(service)?:
            subscribe(service: service)
        case .acknowledge?:
            requestArrived()
            guard let acknowledgement = try? GRPCPushAcknowledgement(serializedBytes: Array(message)) else {
                answer(status: .invalidArgument, message: "not a SwitchboardPushAck")
                return
            }
            hub.acknowledge(acknowledgement, from: connection)
            respond(with: RPCResponse(status: 200, message: "OK"))
        case let .message(route)?:
            requestArrived()
            serve(message, through: route, request: request)
        case .unknown?, .noEvents?, nil:
            // An unknown method (or the event methods of a service without events) is answered
            // by `begin` (which runs after this when the whole request came in the read that
            // opened the stream), the same way whichever runs first.
            requestArrived()
        }
    }

    /// Runs the route's handler in a task started from the loop: where the platform has
    /// immediate tasks it runs here until the handler first waits, so a handler that answers
    /// straight away writes its answer in this same turn of the loop.
    private func serve(_ message: ArraySlice<UInt8>, through route: RPCRouter.MessageRoute, request: GRPCRequestReading) {
        // Over before it began (`grpc-timeout: 1n`): no handler is started for a call whose
        // answer is already DEADLINE_EXCEEDED.
        if deadline <= .now {
            answer(status: .deadlineExceeded, message: "the deadline passed")
            return
        }
        // Through a buffer: `Data`'s generic initialiser costs an existential box here.
        var body = message.withUnsafeBufferPointer { Data(buffer: $0) }
        if request.isJSON {
            // The handlers read protobuf: a JSON request is transcoded through its generated type.
            if let type = route.endpoint.requestType {
                do {
                    body = try type.init(jsonUTF8Bytes: Array(message), options: server.options.jsonDecoding).serializedData()
                } catch {
                    answer(status: .invalidArgument, message: "the request is not \(type.protoMessageName) in JSON: \(error)")
                    return
                }
            }
        }
        let server = server
        let metadata = request.metadata
        let auth = server.options.authenticate(metadata)
        let router = server.router
        let deadline = deadline
        // The request's bytes are in `body` now.
        deframer = GRPCMessageDeframer(maximumMessageSize: server.options.maximumReceiveMessageSize)
        // Through a responder: a handler that ignores cancellation must not keep a closed
        // stream's call, and through it the connection, alive.
        let lock = lock
        let responder = GRPCCallResponder(call: self, lock: lock, budget: budget)
        let task = connection.loop.startTaskHere {
            defer { responder.handlerFinished() }
            let response = await router.handleMessage(route, body: body, headers: metadata, auth: auth, deadline: deadline)
            guard !Task.isCancelled else { return }
            responder.claimCall()?.answerClaimed(with: response)
        }
        let closed = lock.withLock {
            self.task = task
            self.responder = responder
            return isClosed
        }
        // Closed while the handler ran (it answered straight away, or the stream was reset):
        // the close found no task to cancel, so it is cancelled here (a no-op once it ended).
        if closed {
            task.cancel()
            responder.release()
        }
    }

    /// Keeps the stream open for pushes: the response headers go out now, each push as one
    /// message, and the status only when the server ends the subscription.
    private func subscribe(service: String) {
        guard claim() else { return }
        // A subscription lasts as long as its client stays: no deadline.
        lock.withLock {
            defer { self.timer = nil }
            return self.timer
        }?.cancel()
        // The connection's close crossed this request on the wire (it is served because the
        // close waits a round trip for such streams): a subscription would hold the closing
        // connection until its grace ran out. Refused as unprocessed, it is opened again on a
        // new connection by the client.
        guard connection.state.isAvailable else {
            connection.resetStream(streamID, code: .refusedStream)
            return
        }
        let subscriber = GRPCEventSubscriber(service: service, auth: server.options.authenticate(metadata), headers: metadata,
                                             streamID: streamID, connection: connection, hub: hub)
        self.subscriber = subscriber
        connection.sendHeaders(Self.protobufOKHeaders, streamID: streamID, endStream: false)
        hub.arrived(subscriber)
    }

    /// Claims the right to answer; false once answered or abandoned. The timer stays until
    /// the stream closes.
    private func claim() -> Bool {
        lock.withLock { claimUnderLock() }
    }

    /// ``claim()`` for a caller that holds the connection's stream lock already.
    func claimUnderLock() -> Bool {
        guard !isAnswered else { return false }
        isAnswered = true
        return true
    }

    private func respond(with response: RPCResponse) {
        guard claim() else { return }
        answerClaimed(with: response)
    }

    /// Answers with `response` once the right to answer is claimed.
    func answerClaimed(with response: RPCResponse) {
        let responseMetadata = GRPCSharedHeaderLists.responseMetadata(of: response.headers) ?? GRPCMetadata.responseMetadata(response.headers)
        if response.isSuccess {
            guard isJSON else {
                // Shared header lists when there is no metadata: nothing to build per call.
                connection.sendResponse(headers: responseMetadata.isEmpty ? Self.protobufOKHeaders : Self.protobufOKHeaders + responseMetadata,
                                        data: GRPCMessageFramer.frame(response.body), trailers: Self.okTrailers, streamID: streamID)
                return
            }
            var message = Array(response.body)
            let type = method?.endpoint?.responseBodyType
            do {
                message = try type.map { try $0.init(serializedBytes: message).jsonUTF8Bytes() } ?? Array("{}".utf8)
            } catch {
                connection.sendHeaders([HPACKHeader(":status", "200"), contentTypeHeader, HPACKHeader("grpc-status", "\(GRPCStatusCode.internal.rawValue)"),
                                        HPACKHeader("grpc-message", GRPCMetadata.encodeMessage("the response cannot be written as JSON: \(error)"))],
                                       streamID: streamID, endStream: true)
                return
            }
            connection.sendResponse(headers: [HPACKHeader(":status", "200"), contentTypeHeader] + responseMetadata,
                                    data: GRPCMessageFramer.frame(message), trailers: Self.okTrailers, streamID: streamID)
            return
        }
        let endpoint = method?.endpoint
        let code = GRPCStatusCode(errorStatus: response.status, endpoint: endpoint)
        let text = response.status == 400 ? String(decoding: response.body, as: UTF8.self) : (response.message ?? "status \(response.status)")
        // The message is for people and logs: its first kilobyte. The status itself always
        // goes out; the error body and metadata only if the peer's header limit takes them.
        var trailers = [HPACKHeader(":status", "200"), contentTypeHeader,
                        HPACKHeader("grpc-status", "\(code.rawValue)"),
                        HPACKHeader("grpc-message", GRPCMetadata.encodeMessage(GRPCMetadata.truncated(text, toBytes: max(16, server.options.maximumErrorMessageBytes)))),
                        HPACKHeader(GRPCResponseMapping.statusTrailer, "\(response.status)")]
        let essential = trailers.count
        if !response.body.isEmpty {
            trailers.append(HPACKHeader(GRPCResponseMapping.errorBodyTrailer, GRPCMetadata.encodeBinary(response.body)))
            if let type = response.headers["Content-Type"] { trailers.append(HPACKHeader("switchboard-content-type", type)) }
        }
        connection.sendHeaders(trailers + responseMetadata, essentialCount: essential, streamID: streamID, endStream: true)
    }

    /// Takes `bytes` more of the server's budget for this call; when it is spent, answers
    /// RESOURCE_EXHAUSTED and says `false`.
    private func charge(_ bytes: Int) -> Bool {
        // Closed before it began (reset at once): nothing would give this back.
        if lock.withLock({ isClosed }) { return false }
        if budget.take(bytes) {
            taken += bytes
            return true
        }
        answer(status: .resourceExhausted, message: Self.overBudgetMessage)
        return false
    }

    static let overBudgetMessage = "the server holds too many request bytes; retry later"

    /// A trailers-only answer with `status`; the request's remaining bytes are refused.
    /// `httpStatus` other than 200 tells a client that is not gRPC at all (415, 405).
    private func answer(status: GRPCStatusCode, message: String, httpStatus: Int = 200, extra: [HPACKHeader] = []) {
        guard claim() else { return }
        lock.withLock { task }?.cancel()
        connection.sendHeaders([HPACKHeader(":status", "\(httpStatus)"), contentTypeHeader,
                                HPACKHeader("grpc-status", "\(status.rawValue)"), HPACKHeader("grpc-message", GRPCMetadata.encodeMessage(message))] + extra,
                               streamID: streamID, endStream: true)
        // The client may still be sending: tell it to stop (RFC 9113 §8.1).
        connection.resetStream(streamID, code: .noError)
    }
}

extension GRPCStatusCode {
    /// The code a Switchboard server answers an error status with: the endpoint's own mapping
    /// (its `grpc CODE`s and their defaults); for a status its handler gave without declaring
    /// it, the schema's default for that status (an undeclared 404 is NOT_FOUND, as a
    /// declared one is), else INTERNAL for a 5xx, else UNKNOWN, never a code a declared error
    /// travels as (a client would read it as that error); with no endpoint, the router's
    /// statuses (a 404 is a method nobody serves: UNIMPLEMENTED).
    init(errorStatus status: Int, endpoint: EndpointDescriptor?) {
        guard let endpoint else {
            self = Self.routerCode(forStatus: status)
            return
        }
        let claimed = endpoint.errorStatusByGRPCCode
        if let code = claimed.first(where: { $0.value == status })?.key, let known = GRPCStatusCode(rawValue: code) {
            self = known
            return
        }
        let candidates = [GRPCStatusCode(defaultForErrorStatus: status), (500..<600).contains(status) ? .internal : nil, .unknown]
        self = candidates.lazy.compactMap { $0 }.first { claimed[$0.rawValue] == nil } ?? .unknown
    }

    /// The code for a status the router gave for a request no endpoint took.
    static func routerCode(forStatus status: Int) -> GRPCStatusCode {
        switch status {
        case 400: .invalidArgument
        case 401: .unauthenticated
        case 403: .permissionDenied
        case 404: .unimplemented
        case 429: .resourceExhausted
        case 501: .unimplemented
        case 503: .unavailable
        case 504: .deadlineExceeded
        case 500..<600: .internal
        default: .unknown
        }
    }
}
