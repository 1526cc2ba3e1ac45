import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// Generated mocks: stubs, scripted queues, recorded calls, and clear unstubbed failures.
@Suite struct MockServiceTests {
    @Test func unstubbedCallsFailNamingTheEndpoint() async {
        let mock = MockUsernamesService()
        let result = await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
        guard case let .failure(error) = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(error == .notStubbed(rpcName: "signal.chat.Usernames/LookUpUsernameHash"))
        #expect("\(error)".contains("signal.chat.Usernames/LookUpUsernameHash is not stubbed"))
    }

    @Test func queuedResultsComeFirstThenTheStub() async throws {
        let mock = MockUsernamesService()
        mock.lookUpUsernameHashMock.enqueue(.nonSuccess(.notFound), .failure(.timeout))
        mock.lookUpUsernameHashMock.stub { request in .success(LookUpUsernameHashResponse(uuid: "uuid-\(request.hash.count)")) }
        // Code under test can take the protocol.
        let service: any UsernamesService = mock
        guard case .nonSuccess(.notFound) = await service.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1]))) else {
            Issue.record("first queued result")
            return
        }
        guard case .failure(.timeout) = await service.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1]))) else {
            Issue.record("second queued result")
            return
        }
        #expect(try await service.lookUpUsernameHash(hash: Data([1, 2, 3])).uuid == "uuid-3")
        #expect(mock.lookUpUsernameHashMock.calls.map(\.hash) == [Data([1]), Data([1]), Data([1, 2, 3])])
        mock.lookUpUsernameHashMock.reset()
        #expect(mock.lookUpUsernameHashMock.callCount == 0)
    }

    @Test func callsRecordTheirOptions() async {
        let mock = MockUsernamesService()
        mock.lookUpUsernameHashMock.stub(returning: .nonSuccess(.notFound))
        _ = await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .seconds(3), headers: ["X-Trace": "t1"]))
        _ = await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
        #expect(mock.lookUpUsernameHashMock.callOptions.map(\.headers["X-Trace"]) == ["t1", nil])
        #expect(mock.lookUpUsernameHashMock.callOptions.map(\.timeout) == [.seconds(3), nil])
    }

    /// As a real client: a cancelled task's call fails with `cancelled` unsent, and a call
    /// waiting in its stub ends with `cancelled` as soon as its task is cancelled.
    @Test func cancellationEndsACallAsItWouldEndARealOne() async throws {
        let mock = MockUsernamesService()
        let gate = AsyncStream<Void>.makeStream()
        mock.lookUpUsernameHashMock.stub { _ in
            for await _ in gate.stream {}
            return .nonSuccess(.notFound)
        }
        let call = Task { await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1]))) }
        for _ in 0..<2000 where mock.lookUpUsernameHashMock.callCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        call.cancel()
        guard case .failure(.cancelled) = await call.value else {
            Issue.record("a call waiting in its stub ends when cancelled")
            return
        }
        gate.continuation.finish()
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])))
        }
        guard case .failure(.cancelled) = await cancelledFirst.value else {
            Issue.record("a cancelled task's call fails unsent")
            return
        }
        #expect(mock.lookUpUsernameHashMock.callCount == 1)
    }

    /// A stub slower than the call's timeout times out, as a real call would against a slow
    /// server; a fast one is unaffected by a timeout.
    @Test func aStubSlowerThanTheTimeoutTimesOut() async throws {
        let mock = MockUsernamesService()
        mock.lookUpUsernameHashMock.stub { _ in
            try? await Task.sleep(for: .seconds(60))
            return .success(LookUpUsernameHashResponse(uuid: "late"))
        }
        let started = ContinuousClock.now
        let slow = await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .milliseconds(100)))
        #expect(slow.transportError == .timeout)
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(mock.lookUpUsernameHashMock.callCount == 1)
        mock.lookUpUsernameHashMock.stub(returning: .success(LookUpUsernameHashResponse(uuid: "soon")))
        let fast = await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(timeout: .seconds(60)))
        #expect(fast.value?.uuid == "soon")
    }

    /// A mock refuses what the real client refuses before sending, unrecorded: an empty path
    /// parameter (a request whose `hash` was forgotten), headers with a line break. Before, the
    /// mock answered them, so code that worked against it failed in production (from the
    /// mocks review).
    @Test func whatTheClientRefusesTheMockRefuses() async {
        let mock = MockUsernamesService()
        mock.lookUpUsernameHashMock.stub(returning: .success(LookUpUsernameHashResponse(uuid: "u")))
        #expect(await mock.lookUpUsernameHash(LookUpUsernameHashRequest()).transportError == .invalidRequest("the path parameter 'hash' is empty"))
        let badHeader = await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(headers: ["X-Trace": "a\r\nb"]))
        guard case .invalidRequest? = badHeader.transportError else {
            Issue.record("a header value with a line break must be refused, got \(badHeader)")
            return
        }
        #expect(mock.lookUpUsernameHashMock.callCount == 0)
        // The same calls through the real client fail alike.
        let client = UsernamesClient(transport: InProcessTransport(routes: []))
        #expect(await client.lookUpUsernameHash(LookUpUsernameHashRequest()).transportError == .invalidRequest("the path parameter 'hash' is empty"))
    }

    /// Without a timeout in its options a call gets the endpoint's own (10 s here, from the
    /// schema), as a real call does: a stub that never answers ends (before, a test hung).
    @Test func theEndpointsTimeoutAppliesWhenTheCallerGivesNone() async {
        let mock = MockUsernamesService()
        mock.lookUpUsernameHashMock.stub { _ in
            try? await Task.sleep(for: .seconds(600))
            return .success(LookUpUsernameHashResponse(uuid: "late"))
        }
        #expect(Usernames.lookUpUsernameHash.defaultTimeout == .seconds(10))
        let started = ContinuousClock.now
        #expect(await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1]))).transportError == .timeout)
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    /// A scripted endpoint error leaves its status in the caller's capture, as the server's
    /// response would (it was nil).
    @Test func aScriptedEndpointErrorRecordsItsStatus() async {
        let mock = MockUsernamesService()
        mock.lookUpUsernameHashMock.enqueue(.nonSuccess(.notFound))
        let capture = ResponseCapture()
        _ = await mock.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: CallOptions(responseCapture: capture))
        #expect(capture.status == 404)
    }

    @Test func callsRecordTheirKeysAndVoidEndpointsWork() async {
        let mock = MockSealedSenderMessagesService()
        mock.sendSealedMessageMock.stub(returning: .success(SendMessageResponse(needsSync: true)))
        let key = AccessKey(Data([4, 2]))
        _ = await mock.sendSealedMessage(SendMessageRequest(destination: "bob"), accessKey: key)
        #expect(mock.sendSealedMessageMock.calls.first?.request.destination == "bob")
        #expect(mock.sendSealedMessageMock.calls.first?.accessKey == key)

        let usernames = MockAccountUsernamesService()
        usernames.deleteUsernameHashMock.enqueue(.success(()))
        guard case .success = await usernames.deleteUsernameHash(options: CallOptions()) else {
            Issue.record("Void endpoints return success(())")
            return
        }
    }

    @Test func mocksAreSafeUnderConcurrentCalls() async {
        let mock = MockChatLobbyService()
        mock.listChatsMock.stub(returning: .success(ListChatsResponse()))
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask { _ = await mock.listChats(ListChatsRequest(limit: UInt32(index))) }
            }
        }
        #expect(mock.listChatsMock.callCount == 200)
        #expect(Set(mock.listChatsMock.calls.map(\.limit)) == Set(0..<200))
    }
}
