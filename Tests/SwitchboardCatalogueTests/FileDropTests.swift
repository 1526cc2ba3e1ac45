import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardCatalogue
import SwitchboardRuntime
import Testing

/// Generated handlers that count what they serve.
final class CountingUsernames: UsernamesHandler, ChatRoomHandler, @unchecked Sendable {
    let served = Locked<[Data]>([])
    /// Hashes whose lookups wait (30 s at most) while they are here: a slow handler.
    let held = Locked<Set<Data>>([])

    func lookUpUsernameHash(_ request: LookUpUsernameHashRequest, context: ServerContext) async throws(Usernames.LookUpUsernameHashError) -> LookUpUsernameHashResponse {
        for _ in 0..<3000 where held.current.contains(request.hash) { try? await Task.sleep(for: .milliseconds(10)) }
        served.withLock { $0.append(request.hash) }
        if request.hash == Data([0]) { throw .notFound }
        return LookUpUsernameHashResponse(uuid: "aci-" + request.hash.map { String($0) }.joined(separator: "."))
    }

    func getHistory(_ request: ChatHistoryRequest, context: ServerContext) async throws(ChatRoom.GetHistoryError) -> ChatHistoryResponse {
        ChatHistoryResponse(messages: [ChatMessage(id: request.chatId)])
    }
    func sendChatMessage(_ request: SendChatMessageRequest, context: ServerContext) async throws(ChatRoom.SendChatMessageError) -> ChatMessage {
        if request.text.isEmpty { throw .invalid(ValidationError(field: "text", reason: "empty")) }
        return ChatMessage(id: request.clientMessageId, text: request.text)
    }
    func markRead(_ request: ReadReceipt, context: ServerContext) async throws(ChatRoom.MarkReadError) {}
}

/// The file-drop transport and provider in one process, over an exported catalogue.
@Suite(.timeLimit(.minutes(3))) struct FileDropTests {
    struct Setup {
        let exported: ExportedCatalogue
        let catalogue: ServiceCatalogue
        let handlers = CountingUsernames()
        let provider: FileDropProvider
        var options = FileDropOptions()

        init() throws {
            exported = try ExportedCatalogue()
            catalogue = try ServiceCatalogue(directory: exported.directory)
            options.durable = false
            provider = FileDropProvider(directory: exported.directory, catalogue: catalogue,
                                        router: RPCRouter(routes: Usernames.routes(handlers) + ChatRoom.routes(handlers)), options: options)
        }

        func transport<Auth: AuthMode>(_ auth: Auth.Type, consumer: String? = "chat.example.app") -> FileDropTransport<Auth> {
            FileDropTransport(directory: exported.directory, catalogue: catalogue, consumer: consumer, options: options)
        }
    }

    /// Far off: these tests are about what is served, and a full parallel test run can keep
    /// the provider's polling from running for longer than an endpoint's 10 s.
    static let patient = CallOptions(timeout: .seconds(300))

    @Test func generatedClientsGetTypedResultsThroughTheFolder() async throws {
        let setup = try Setup()
        defer { setup.exported.remove() }
        try setup.provider.start()
        let usernames = UsernamesClient(transport: setup.transport(Unauthenticated.self),
                                        interceptors: [CatalogueInterceptor(catalogue: setup.catalogue, services: [Usernames.descriptor], country: "DEU")])
        #expect(try await usernames.lookUpUsernameHash(hash: Data([1, 2]), options: Self.patient).uuid == "aci-1.2")
        #expect(await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0])), options: Self.patient).endpointError == .notFound)
        let room = ChatRoomClient(transport: setup.transport(Authenticated.self))
        #expect(await room.sendChatMessage(SendChatMessageRequest(chatId: "c", clientMessageId: "k", text: ""), options: Self.patient).endpointError
                == .invalid(ValidationError(field: "text", reason: "empty")))
        #expect(try await room.sendChatMessage(chatId: "c", clientMessageId: "k", text: "hi", options: Self.patient).id == "k")
        await setup.provider.stop()

        // Every request is a plain file: listed, answered, readable.
        let records = setup.transport(Unauthenticated.self).records()
        #expect(records.count == 4)
        #expect(records.allSatisfy { $0.state == .answered && $0.responseFile != nil })
        let request = try #require(records.first { $0.rpcName.hasSuffix("LookUpUsernameHash") })
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: request.requestFile)) as? [String: Any]
        #expect(document?["rpc"] as? String == "signal.chat.Usernames/LookUpUsernameHash")
        #expect(document?["version"] as? Int == 2)
        #expect(request.requestFile.path.contains("/usernames/look_up_username_hash/chat.example.app/"))
        // The country check ran before anything was written.
        let elsewhere = UsernamesClient(transport: setup.transport(Unauthenticated.self),
                                        interceptors: [CatalogueInterceptor(catalogue: setup.catalogue, services: [Usernames.descriptor], country: "PRK")])
        #expect(await elsewhere.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([5]))).transportError
                == .unavailable(.notOfferedInCountry(service: "signal.chat.Usernames", country: "PRK")))
        #expect(setup.transport(Unauthenticated.self).records().count == 4)
    }

    @Test func aRequestClaimedWhenTheProviderStoppedIsAnsweredInterruptedAndNeverServedAgain() async throws {
        let setup = try Setup()
        defer { setup.exported.remove() }
        // A consumer submits while no provider runs.
        let transport = setup.transport(Unauthenticated.self, consumer: nil)
        let call = Task { await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([7])), options: Self.patient) }
        var submitted: FileDropTransport<Unauthenticated>.Record?
        _ = await eventually(within: .seconds(60)) {
            submitted = transport.records().first
            return submitted != nil
        }
        let record = try #require(submitted)
        #expect(record.state == .submitted)
        // A provider claimed it, then died before answering: what a kill leaves behind.
        let claimed = record.requestFile.deletingLastPathComponent().appendingPathComponent(record.id + ".claimed.json")
        try FileManager.default.moveItem(at: record.requestFile, to: claimed)
        #expect(transport.records().first?.state == .claimed)
        try setup.provider.start()
        let result = await call.value
        guard case .disconnected? = result.transportError else {
            Issue.record("an interrupted request must fail as disconnected, got \(result)")
            await setup.provider.stop()
            return
        }
        await setup.provider.stop()
        #expect(setup.handlers.served.current.isEmpty)
        #expect(transport.records().first?.state == .answered)
        // The consumer may resubmit it as a new request, which is then served once.
        try setup.provider.start()
        let again = try transport.resubmit(try #require(transport.records().first))
        _ = await eventually(within: .seconds(60)) { transport.records().first(where: { $0.id == again })?.state == .answered }
        await setup.provider.stop()
        #expect(transport.records().first { $0.id == again }?.state == .answered)
        #expect(setup.handlers.served.current == [Data([7])])
    }

    @Test func aDuplicateIdIsNotServedTwiceAndBadDocumentsAreRefused() async throws {
        let setup = try Setup()
        defer { setup.exported.remove() }
        let transport = setup.transport(Unauthenticated.self, consumer: nil)
        try setup.provider.start()
        _ = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([9])), options: Self.patient)
        let record = try #require(transport.records().first)
        // The same document dropped again under its answered id (the consumer archived the pair).
        #expect(record.requestFile.deletingLastPathComponent().lastPathComponent == ".archive")
        let folder = record.requestFile.deletingLastPathComponent().deletingLastPathComponent()
        try FileManager.default.copyItem(at: record.requestFile, to: folder.appendingPathComponent(record.id + ".request.json.copy"))
        try FileManager.default.moveItem(at: folder.appendingPathComponent(record.id + ".request.json.copy"), to: folder.appendingPathComponent(record.id + ".request.json"))
        // A malformed document, and one for another endpoint.
        try Data("not json".utf8).write(to: folder.appendingPathComponent("20260101T000000000Z_bad_00000001.request.json"))
        let misplaced = #"{"id": "20260101T000000001Z_x_00000002", "spec": "x", "rpc": "signal.chat.ChatRoom/MarkRead", "verb": "PUT", "path": "/v1/chats/c/read", "headers": []}"#
        try Data(misplaced.utf8).write(to: folder.appendingPathComponent("20260101T000000001Z_x_00000002.request.json"))
        _ = await eventually(within: .seconds(60)) {
            FileManager.default.fileExists(atPath: folder.appendingPathComponent("20260101T000000001Z_x_00000002.response.json").path)
                && !FileManager.default.fileExists(atPath: folder.appendingPathComponent(record.id + ".request.json").path)
        }
        await setup.provider.stop()
        // The duplicate was taken (and refused), the misplaced one answered.
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(record.id + ".request.json").path))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("20260101T000000001Z_x_00000002.response.json").path))
        #expect(setup.handlers.served.current == [Data([9])])
        let malformed = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("20260101T000000000Z_bad_00000001.response.json"))) as? [String: Any]
        #expect(malformed?["status"] as? Int == 400)
        let wrong = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("20260101T000000001Z_x_00000002.response.json"))) as? [String: Any]
        #expect(wrong?["status"] as? Int == 400)
    }

    @Test func aConsumerGivesUpAtTheDeadlineAndLeavesTheRequestToInspect() async throws {
        let setup = try Setup()
        defer { setup.exported.remove() }
        let transport = setup.transport(Unauthenticated.self)
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([3])), options: CallOptions(timeout: .milliseconds(200)))
        #expect(result.transportError == .timeout)
        // Withdrawn: no provider took it before the consumer gave up, so none ever will.
        #expect(transport.records().map(\.state) == [.withdrawn])
        #expect(await setup.provider.servePending() == 0)
        // And a provider starting (its recovery, then its polling) leaves it unserved too.
        try setup.provider.start()
        #expect(await setup.provider.servePending() == 0)
        await setup.provider.stop()
        #expect(setup.handlers.served.current.isEmpty)
    }

    static let day: TimeInterval = 24 * 3600

    @Test func finishedRequestsAreRemovedAfterTheRetentionAndNothingInProgressIs() async throws {
        let setup = try Setup()
        defer { setup.exported.remove() }
        let transport = setup.transport(Unauthenticated.self)
        let folder = try #require(transport.folder(for: "signal.chat.Usernames/LookUpUsernameHash"))
        let client = UsernamesClient(transport: transport)
        try setup.provider.start()
        // Answered and read (archived by the consumer).
        _ = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: Self.patient)
        let read = try #require(transport.records().first)
        // Answered, never read: a copy dropped by hand, which nobody archives.
        let unread = try transport.resubmit(read)
        // Answered shows once the response is written; the claim becomes the served marker
        // just after, which the copy below needs.
        _ = await eventually(within: .seconds(60)) { FileManager.default.fileExists(atPath: folder.appendingPathComponent(unread + ".served.json").path) }
        // The same document dropped again under the unread one's id: refused as a duplicate,
        // and its claim does not stay behind (before, it did, for ever).
        try FileManager.default.copyItem(at: folder.appendingPathComponent(unread + ".served.json"), to: folder.appendingPathComponent(unread + ".request.json"))
        _ = await eventually(within: .seconds(60)) { !FileManager.default.fileExists(atPath: folder.appendingPathComponent(unread + ".request.json").path) }
        await setup.provider.stop()
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(unread + ".request.json").path), "the duplicate was taken")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(unread + ".claimed.json").path))
        #expect(setup.handlers.served.current.count == 2)
        // Withdrawn: the consumer gave up with no provider running.
        _ = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2])), options: CallOptions(timeout: .milliseconds(50)))
        // Still waiting, and being served (as a killed provider leaves it).
        let waiting = try transport.resubmit(read)
        let serving = try transport.resubmit(read)
        try FileManager.default.moveItem(at: folder.appendingPathComponent(serving + ".request.json"), to: folder.appendingPathComponent(serving + ".claimed.json"))
        // A document a consumer died writing.
        let temporary = folder.appendingPathComponent(".\(waiting).request.json.1a2b.tmp")
        try Data("{".utf8).write(to: temporary)
        #expect(transport.records().count == 5)

        var keepAll = setup.options
        keepAll.retention = nil
        let keeping = FileDropProvider(directory: setup.exported.directory, catalogue: setup.catalogue, router: setup.provider.router, options: keepAll)
        #expect(await keeping.removeExpired(now: Date().addingTimeInterval(30 * Self.day)) == 0)
        // Within the retention (7 days), nothing goes; a retention under the minimum counts as an hour.
        #expect(await setup.provider.removeExpired(now: Date().addingTimeInterval(6 * Self.day)) == 0)
        var short = setup.options
        short.retention = .seconds(1)
        let hasty = FileDropProvider(directory: setup.exported.directory, catalogue: setup.catalogue, router: setup.provider.router, options: short)
        #expect(await hasty.removeExpired(now: Date().addingTimeInterval(60)) == 0)

        // Past it: two archived, two unread, one withdrawn, one temporary file.
        #expect(await setup.provider.removeExpired(now: Date().addingTimeInterval(8 * Self.day)) == 6)
        let left = transport.records()
        #expect(Set(left.map(\.id)) == [waiting, serving])
        #expect(left.first { $0.id == waiting }?.state == .submitted)
        #expect(left.first { $0.id == serving }?.state == .claimed)
        #expect(!FileManager.default.fileExists(atPath: temporary.path))

        // A running provider sweeps by itself, off the serving path: with its clock eight
        // days ahead, the withdrawal made just now goes.
        _ = await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([3])), options: CallOptions(timeout: .milliseconds(50)))
        let withdrawn = try #require(transport.records().first { $0.state == .withdrawn })
        let ahead = FileDropProvider(directory: setup.exported.directory, catalogue: setup.catalogue, router: setup.provider.router,
                                     options: setup.options, clock: { Date().addingTimeInterval(8 * Self.day) })
        try ahead.start()
        _ = await eventually(within: .seconds(60)) { !transport.records().contains(where: { $0.id == withdrawn.id }) }
        await ahead.stop()
        #expect(!transport.records().contains { $0.id == withdrawn.id })
    }
}
