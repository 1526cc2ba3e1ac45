import Foundation
import SwitchboardRuntime
import Testing

/// `RPCCall` calls a deadline-enforcing transport directly, in the caller's task, and races
/// any other transport against its deadline from a task of its own.
@Suite struct RPCCallDispatchTests {
    static let endpoint = EndpointDescriptor(rpcName: "test.Echo/Echo", verb: "GET", pathTemplate: "/echo", auth: .none)

    /// Answers 200 and records which task sent the request.
    final class RecordingTransport: RPCTransport, @unchecked Sendable {
        typealias Auth = Unauthenticated
        let lock = NSLock()
        var senderTask: Int?
        func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
            let task = withUnsafeCurrentTask { $0?.hashValue }
            lock.withLock { senderTask = task }
            return RPCResponse(status: 200)
        }
    }

    final class EnforcingTransport: DeadlineEnforcingTransport, @unchecked Sendable {
        typealias Auth = Unauthenticated
        let inner = RecordingTransport()
        func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse { try await inner.send(request) }
    }

    @Test func onlyDeadlineEnforcingTransportsSaySo() {
        #expect(EnforcingTransport().enforcesDeadlines)
        #expect(!RecordingTransport().enforcesDeadlines)
        #expect(!InProcessTransport<Unauthenticated>(routes: []).enforcesDeadlines)
        let existential: any RPCTransport<Unauthenticated> = EnforcingTransport()
        #expect(existential.enforcesDeadlines)
    }

    @Test func aDeadlineEnforcingTransportRunsInTheCallersTask() async {
        let enforcing = EnforcingTransport()
        let plain = RecordingTransport()
        let caller = withUnsafeCurrentTask { $0?.hashValue }
        let request = RPCRequest(endpoint: Self.endpoint, path: "/echo")
        let first = await RPCCall.send(request, over: enforcing, options: CallOptions(timeout: .seconds(5)))
        let second = await RPCCall.send(request, over: plain, options: CallOptions(timeout: .seconds(5)))
        #expect((try? first.get())?.status == 200)
        #expect((try? second.get())?.status == 200)
        #expect(caller != nil)
        #expect(enforcing.inner.lock.withLock { enforcing.inner.senderTask } == caller)
        #expect(plain.lock.withLock { plain.senderTask } != caller)
    }

    /// A call out of time before it starts is not sent (a handler passing on `timeRemaining`
    /// once it is zero ran the call on the server while its caller got `timeout`), and a
    /// timeout of `Int64.max` seconds ("never") is cut to `maximumTimeout` instead of trapping
    /// in the sleep that races it (both from the runtime review).
    @Test func noTimeLeftIsNotSentAndNoTimeoutIsNotATrap() async {
        let plain = RecordingTransport()
        let enforcing = EnforcingTransport()
        let request = RPCRequest(endpoint: Self.endpoint, path: "/echo")
        for transport in [plain, enforcing.inner] { transport.lock.withLock { transport.senderTask = nil } }
        let zero = await RPCCall.send(request, over: plain, options: CallOptions(timeout: .zero))
        let negative = await RPCCall.send(request, over: enforcing, options: CallOptions(timeout: .seconds(-1)))
        var past = request
        past.deadline = .now - .seconds(1)
        let pastDeadline = await RPCCall.send(past, over: plain, options: CallOptions(timeout: .seconds(5)))
        #expect(zero.failure == .timeout && negative.failure == .timeout && pastDeadline.failure == .timeout)
        #expect(plain.lock.withLock { plain.senderTask } == nil, "sent with no time left")
        #expect(enforcing.inner.lock.withLock { enforcing.inner.senderTask } == nil, "sent with no time left")
        let never = await RPCCall.send(request, over: plain, options: CallOptions(timeout: .seconds(Int64.max)))
        #expect((try? never.get())?.status == 200)
    }
}

private extension Result {
    var failure: Failure? {
        if case let .failure(error) = self { return error }
        return nil
    }
}
