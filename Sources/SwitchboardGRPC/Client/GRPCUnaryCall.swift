import Foundation
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// What a gRPC call's stream delivered, before it is read as a status.
struct GRPCCallResponse: Sendable {
    var headers: [HPACKHeader]
    /// The first message, copied out of the connection's read buffer as it arrived (the
    /// copy the response body needs anyway).
    var message: Data?
    /// How many messages came (a unary answer has one).
    var messageCount: Int
    var trailers: [HPACKHeader]
    /// The response was one block (trailers-only): `headers` and `trailers` are the same.
    var isTrailersOnly = false
}

/// One unary call on one stream: sends the request, collects the response's headers,
/// messages and trailers, and ends exactly once, by its answer, its deadline, its
/// cancellation or its stream's end. Stream callbacks arrive on the connection's loop.
final class GRPCUnaryCall: HTTP2StreamDelegate, @unchecked Sendable {
    enum Outcome: Sendable {
        case finished(GRPCCallResponse)
        /// The server certainly did not process it: safe to send again elsewhere.
        case notProcessed(DisconnectReason)
        case failed(TransportError)
    }

    private let owner: GRPCClientConnection
    private var connection: HTTP2ChannelDriver { owner.driver }
    /// The call's deadline; the rest of the request is in `headers` and `framedMessage`, so
    /// the call does not hold (and copy) the whole request.
    private let deadline: ContinuousClock.Instant?
    private let framedMessage: [UInt8]
    private let headers: [HPACKHeader]

    /// The connection's lock for its streams' own state: one per connection, not one per call.
    private var lock: AdaptiveLock { connection.streamStateLock }
    // Stored state below is reached only under its lock or on the loop's thread, which
    // already makes each access exclusive: `@exclusivity(unchecked)` drops the runtime's own
    // check, about 80 instructions an access and 5% of a call (docs/performance.md).
    @exclusivity(unchecked) private var continuation: UnsafeContinuation<Outcome, Never>?
    @exclusivity(unchecked) private var finished = false
    /// The server answered in full: a stream that opens (or is found open) after it is reset
    /// with NO_ERROR, not CANCEL.
    @exclusivity(unchecked) private var answeredInFull = false
    /// The outcome, kept only when the call ended before its caller began to wait for it:
    /// handed to a waiting caller it is not stored (a copy and a destroy less per call).
    @exclusivity(unchecked) private var outcome: Outcome?
    @exclusivity(unchecked) private var streamID: UInt32?
    @exclusivity(unchecked) private var openToken: UInt64?
    // Loop-confined.
    @exclusivity(unchecked) private var responseHeaders: [HPACKHeader] = []
    @exclusivity(unchecked) private var trailers: [HPACKHeader] = []
    @exclusivity(unchecked) private var isTrailersOnly = false
    @exclusivity(unchecked) private var message: Data?
    @exclusivity(unchecked) private var messageCount = 0
    @exclusivity(unchecked) private var deframer: GRPCMessageDeframer

    init(connection: GRPCClientConnection, request: RPCRequest, framedMessage: [UInt8], options: GRPCClientOptions, head: GRPCRequestHead,
         sharedMetadata: [HPACKHeader]?, json: Bool) {
        owner = connection
        deadline = request.deadline
        self.framedMessage = framedMessage
        deframer = GRPCMessageDeframer(maximumMessageSize: options.maximumReceiveMessageSize)
        headers = head.headers(path: request.endpoint.grpcPath, deadline: request.deadline, metadata: request.headers,
                               sharedMetadata: sharedMetadata, json: json)
    }

    /// Sends the call and waits for its end. Once per call (a retry is a new call): an
    /// outcome handed to the waiting caller is not kept for a second run.
    func run() async -> Outcome {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Outcome, Never>) in
                let ready: Outcome? = lock.withLock {
                    if finished { return outcome }
                    self.continuation = continuation
                    return nil
                }
                if let ready {
                    continuation.resume(returning: ready)
                    return
                }
                start()
            }
        } onCancel: {
            self.abandon(.failed(.cancelled))
        }
    }

    private func start() {
        if let deadline {
            owner.watch(self, until: deadline)
            // Ended (cancelled) before the watch began: its end found no entry to forget.
            if lock.withLock({ finished }) {
                owner.forget(self)
                return
            }
        }
        // The request message goes out with the headers, in one write.
        let token = connection.openStream(headers: headers, endStream: true, body: framedMessage, delegate: self) { [self] opened in
            // Held strongly: the driver drops this closure once it has run (a weak
            // reference cost a side table for every call).
            switch opened {
            case let .success(id):
                let (stillWanted, answered) = lock.withLock { () -> (Bool, Bool) in
                    streamID = id
                    return (!finished, answeredInFull)
                }
                guard stillWanted else {
                    // The answer may come (on the loop) before this runs (on the caller's thread).
                    connection.resetStream(id, code: answered ? .noError : .cancel)
                    return
                }
            case let .failure(error):
                switch error {
                case .goingAway: finish(.notProcessed(DisconnectReason(.goingAway, "the connection is going away")))
                case .connectionClosed:
                    // Closed because it went away (a GOAWAY, then nothing left to finish): as going away.
                    let state = connection.state
                    finish(.notProcessed(DisconnectReason(state.endedGoingAway ? .goingAway : .connectionLost, state.endReason ?? "the connection closed")))
                // The server takes no more streams now, and enough wait already: come back later.
                case .tooManyWaiting: finish(.failed(.retryLater(retryAfter: nil)))
                default: finish(.failed(.invalidRequest("\(error)")))
                }
            }
        }
        // Ended while the open was being queued: the end saw no token to cancel, so the
        // request is withdrawn here rather than sent once a stream slot frees.
        let ended = lock.withLock { () -> Bool in
            openToken = token
            return finished && streamID == nil
        }
        if ended { connection.cancelOpen(token) }
    }

    /// The call's deadline has passed: it ends as a timeout.
    func deadlinePassed() {
        abandon(.failed(.timeout))
        // A silent server, or a live one that was merely slow: a PING tells them apart.
        connection.checkLiveness()
    }

    /// Ends the call from this side (deadline or cancellation): the stream is reset with CANCEL.
    private func abandon(_ result: Outcome) {
        guard finish(result) else { return }
        // Read after the outcome is set: an open that completes from here on sees it and
        // resets its own stream, and one that completed before left its id here. (Read
        // before, a stream opened in between was reset by nobody and held its slot.)
        let (id, token): (UInt32?, UInt64?) = lock.withLock { (streamID, openToken) }
        if let id { connection.resetStream(id, code: .cancel) } else if let token { connection.cancelOpen(token) }
    }

    /// Resolves the call once; false if it was already resolved.
    @discardableResult
    private func finish(_ result: Outcome) -> Bool {
        let (won, waiting): (Bool, UnsafeContinuation<Outcome, Never>?) = lock.withLock {
            guard !finished else { return (false, nil) }
            finished = true
            guard let waiting = continuation else {
                outcome = result
                return (true, nil)
            }
            continuation = nil
            return (true, waiting)
        }
        guard won else { return false }
        if deadline != nil { owner.forget(self) }
        guard let waiting else { return true }
        let loop = connection.loop
        if loop.inEventLoop {
            // Heard while the loop works through a read: the caller resumes once the loop is
            // done with it. Resumed at once, it would send its next call while the loop still
            // delivers this read's last events, and the two would take turns sleeping on the
            // connection's lock (a futex wait and wake on every call).
            loop.execute { waiting.resume(returning: result) }
        } else {
            waiting.resume(returning: result)
        }
        return true
    }

    // MARK: HTTP2StreamDelegate (on the loop)

    /// Waited for a stream slot: `grpc-timeout` counts from now, so the server sees the time
    /// the caller has left (rounded up by at most 1%), not the time it had when it started.
    func headersForDelayedOpen(_ headers: [HPACKHeader]) -> [HPACKHeader] {
        guard let deadline, let index = headers.firstIndex(where: { $0.name == "grpc-timeout" }) else { return headers }
        var updated = headers
        updated[index].value = GRPCTimeout.encode(deadline - .now)
        return updated
    }

    func streamReceived(headers: [HPACKHeader], endStream: Bool) {
        if endStream {
            // Trailers, or a trailers-only response.
            if responseHeaders.isEmpty {
                responseHeaders = headers
                isTrailersOnly = true
            }
            trailers = headers
            // Bytes of a message that never finished are an error, whatever the trailers say
            // (only an END_STREAM on DATA checked this before).
            do throws(GRPCFramingError) {
                try deframer.finish()
            } catch {
                fail(framing: error)
                return
            }
            // Marked before the call resolves: an open reported after it then resets with
            // NO_ERROR. The reset after: its report would end the call first.
            lock.withLock { answeredInFull = true }
            complete()
            stopSending()
        } else {
            responseHeaders = headers
            // A proxy's error page (a 502 from a load balancer, an HTML 200): its body is not
            // gRPC messages, and reading it as such would hide the status that says what
            // happened. The call ends with that status now, and the stream is dropped.
            if !GRPCResponseMapping.beginsGRPCResponse(headers) {
                complete()
                if let id = lock.withLock({ streamID }) { connection.resetStream(id, code: .cancel) }
            }
        }
    }

    func streamReceived(data: ArraySlice<UInt8>, endStream: Bool) {
        // A unary answer is one message: a second ends the call at once (the stream is
        // reset), so a server that keeps sending cannot make the client hold more.
        guard messageCount <= 1 else { return }
        do throws(GRPCFramingError) {
            try deframer.append(data) { (next: ArraySlice<UInt8>) throws(GRPCFramingError) in
                // Through a buffer: `Data`'s generic initialiser costs an existential box here.
                if messageCount == 0 { message = next.withUnsafeBufferPointer { Data(buffer: $0) } }
                messageCount += 1
            }
            if messageCount > 1 {
                fail(framing: .tooManyMessages)
                return
            }
            if endStream {
                try deframer.finish()
                lock.withLock { answeredInFull = true }
                complete()
                stopSending()
            }
        } catch {
            fail(framing: error)
        }
    }

    func streamClosed(_ closure: HTTP2StreamClosure) {
        // A GOAWAY past the stream, or REFUSED_STREAM: either way the server took none of it
        // (RFC 9113 section 8.7), so it is reported as going away, safe to send again.
        if closure.isSafeToRetry {
            // Unless it answered already: a server that sent response headers began the call,
            // whatever it says next, and a call is committed once they arrive (gRFC A6), so it is
            // not sent again (found by review: a non-idempotent call could run twice).
            guard responseHeaders.isEmpty else {
                finish(.failed(.grpcStatus(code: GRPCStatusCode.unavailable.rawValue,
                                           message: "the server stopped the call after answering its headers (\(closure))", details: nil)))
                return
            }
            finish(.notProcessed(DisconnectReason(.goingAway, "the server did not process the call (\(closure))")))
            return
        }
        switch closure {
        case .completed:
            complete()
        case .notProcessed:
            break // Taken above.
        case let .resetByPeer(code):
            let status: GRPCStatusCode = switch code {
            case .cancel: .cancelled
            case .enhanceYourCalm: .resourceExhausted
            case .inadequateSecurity: .permissionDenied
            default: .internal
            }
            finish(.failed(.grpcStatus(code: status.rawValue, message: "the server reset the stream with \(code)", details: nil)))
        case let .resetHere(violation):
            finish(.failed(.unexpectedResponse("HTTP/2: \(violation)")))
        case let .connectionEnded(reason):
            finish(.failed(.disconnected(reason: DisconnectReason(reason))))
        }
    }

    /// The server has answered in full: what of the request is still to send (waiting for
    /// window) is dropped with RST_STREAM(NO_ERROR) (RFC 9113 §8.1), or the stream would hold
    /// its slot and those bytes for as long as the server gives no window (found by review).
    /// Nothing is sent for a stream this side had finished sending: it is closed already.
    private func stopSending() {
        if let id = lock.withLock({ streamID }) { connection.resetStream(id, code: .noError) }
    }

    private func complete() {
        finish(.finished(GRPCCallResponse(headers: responseHeaders, message: message, messageCount: messageCount, trailers: trailers,
                                            isTrailersOnly: isTrailersOnly)))
    }

    private func fail(framing error: GRPCFramingError) {
        let id = lock.withLock { streamID }
        finish(.failed(.grpcStatus(code: error.code.rawValue, message: error.description, details: nil)))
        if let id { connection.resetStream(id, code: .cancel) }
    }
}
