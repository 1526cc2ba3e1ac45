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
        guard case .nonSuccess(.notFound) = await service.lookUpUsernameHash(LookUpUsernameHashRequest()) else {
            Issue.record("first queued result")
            return
        }
        guard case .failure(.timeout) = await service.lookUpUsernameHash(LookUpUsernameHashRequest()) else {
            Issue.record("second queued result")
            return
        }
        #expect(try await service.lookUpUsernameHash(hash: Data([1, 2, 3])).uuid == "uuid-3")
        #expect(mock.lookUpUsernameHashMock.calls.map(\.hash) == [Data(), Data(), Data([1, 2, 3])])
        mock.lookUpUsernameHashMock.reset()
        #expect(mock.lookUpUsernameHashMock.callCount == 0)
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
