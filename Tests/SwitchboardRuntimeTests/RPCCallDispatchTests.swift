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
}
