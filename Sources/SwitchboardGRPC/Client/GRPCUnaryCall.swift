import Foundation
import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// What a gRPC call's stream delivered, before it is read as a status.
struct GRPCCallResponse: Sendable {
    var headers: [HPACKHeader]
    var messages: [[UInt8]]
    var trailers: [HPACKHeader]
}

/// One unary call on one stream: sends the request, collects the response's headers,
/// messages and trailers, and ends exactly once, by its answer, its deadline, its
/// cancellation or its stream's end. Stream callbacks arrive on the connection's loop.
final class GRPCUnaryCall: HTTP2StreamDelegate, @unchecked Sendable {
    enum Outcome: Sendable {
        case finished(GRPCCallResponse)
        /// The server certainly did not process it: safe to send again elsewhere.
        case notProcessed(String)
        case failed(TransportError)
    }

    private let connection: HTTP2ChannelDriver
    private let request: RPCRequest
    private let framedMessage: [UInt8]
    private let options: GRPCClientOptions
    private let headers: [HPACKHeader]

    private let lock = NSLock()
    private var continuation: CheckedContinuation<Outcome, Never>?
    private var outcome: Outcome?
    private var streamID: UInt32?
    private var openToken: UInt64?
    private var timer: LoopTimer?
    // Loop-confined.
    private var responseHeaders: [HPACKHeader] = []
    private var trailers: [HPACKHeader] = []
    private var messages: [[UInt8]] = []
    private var deframer: GRPCMessageDeframer

    init(connection: HTTP2ChannelDriver, request: RPCRequest, framedMessage: [UInt8], options: GRPCClientOptions, scheme: String, authority: String) {
        self.connection = connection
        self.request = request
        self.framedMessage = framedMessage
        self.options = options
        deframer = GRPCMessageDeframer(maximumMessageSize: options.maximumReceiveMessageSize)
        headers = Self.headers(rpcName: request.endpoint.rpcName, scheme: scheme, authority: authority, deadline: request.deadline,
                               options: options, metadata: request.headers)
    }

    /// A call's request headers: pseudo-headers, gRPC's own, then metadata.
    static func headers(rpcName: String, scheme: String, authority: String, deadline: ContinuousClock.Instant?,
                        options: GRPCClientOptions, metadata: RPCHeaders) -> [HPACKHeader] {
        var headers = [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", scheme),
                       HPACKHeader(":path", "/" + rpcName), HPACKHeader(":authority", authority),
                       HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers"),
                       HPACKHeader("user-agent", options.userAgent)]
        if let deadline {
            headers.append(HPACKHeader("grpc-timeout", GRPCTimeout.encode(deadline - .now), indexing: .never))
        }
        headers += GRPCMetadata.requestMetadata(options.metadata)
        headers += GRPCMetadata.requestMetadata(metadata)
        return headers
    }

    func run() async -> Outcome {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let ready: Outcome? = lock.withLock {
                    if let outcome { return outcome }
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
        if let deadline = request.deadline {
            let timer = connection.loop.schedule(at: deadline) { [weak self] in self?.abandon(.failed(.timeout)) }
            lock.withLock { self.timer = timer }
        }
        // The request message goes out with the headers, in one write.
        let token = connection.openStream(headers: headers, endStream: true, body: framedMessage, delegate: self) { [weak self] opened in
            guard let self else { return }
            switch opened {
            case let .success(id):
                let stillWanted = lock.withLock { () -> Bool in
                    streamID = id
                    return outcome == nil
                }
                guard stillWanted else {
                    connection.resetStream(id, code: .cancel)
                    return
                }
            case let .failure(error):
                switch error {
                case .goingAway: finish(.notProcessed("the connection is going away"))
                case .connectionClosed: finish(.notProcessed(connection.state.endReason ?? "the connection closed"))
                default: finish(.failed(.invalidRequest("\(error)")))
                }
            }
        }
        lock.withLock { openToken = token }
    }

    /// Ends the call from this side (deadline or cancellation): the stream is reset with CANCEL.
    private func abandon(_ result: Outcome) {
        let (id, token): (UInt32?, UInt64?) = lock.withLock { (streamID, openToken) }
        guard finish(result) else { return }
        if let id { connection.resetStream(id, code: .cancel) } else if let token { connection.cancelOpen(token) }
    }

    /// Resolves the call once; false if it was already resolved.
    @discardableResult
    private func finish(_ result: Outcome) -> Bool {
        let (won, waiting, timer): (Bool, CheckedContinuation<Outcome, Never>?, LoopTimer?) = lock.withLock {
            guard outcome == nil else { return (false, nil, nil) }
            outcome = result
            defer {
                continuation = nil
                self.timer = nil
            }
            return (true, continuation, self.timer)
        }
        timer?.cancel()
        waiting?.resume(returning: result)
        return won
    }

    // MARK: HTTP2StreamDelegate (on the loop)

    func streamReceived(headers: [HPACKHeader], endStream: Bool) {
        if endStream {
            // Trailers, or a trailers-only response.
            if responseHeaders.isEmpty { responseHeaders = headers }
            trailers = headers
            complete()
        } else {
            responseHeaders = headers
        }
    }

    func streamReceived(data: [UInt8], endStream: Bool) {
        do throws(GRPCFramingError) {
            messages += try deframer.append(data)
            if endStream {
                try deframer.finish()
                complete()
            }
        } catch {
            fail(framing: error)
        }
    }

    func streamClosed(_ closure: HTTP2StreamClosure) {
        switch closure {
        case .completed:
            complete()
        case .notProcessed, .resetByPeer(.refusedStream):
            finish(.notProcessed("the server did not process the call (\(closure))"))
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
            finish(.failed(.disconnected(reason: reason)))
        }
    }

    private func complete() {
        finish(.finished(GRPCCallResponse(headers: responseHeaders, messages: messages, trailers: trailers)))
    }

    private func fail(framing error: GRPCFramingError) {
        let id = lock.withLock { streamID }
        finish(.failed(.grpcStatus(code: error.code.rawValue, message: error.description, details: nil)))
        if let id { connection.resetStream(id, code: .cancel) }
    }
}
