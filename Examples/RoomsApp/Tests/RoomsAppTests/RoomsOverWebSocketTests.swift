import Accounts
import Foundation
import Presence
import RoomsAPI
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// The server side of the app's schema, as a test backend.
struct RoomsBackend: RoomsHandler, DirectoryHandler, PresenceHandler, ModerationHandler {
    let statuses = Locked<[Status]>([])

    func ban(_ request: BanRequest, context: ServerContext) async throws(Moderation.BanError) {
        guard context.headers["X-Moderator"] == "yes" else { throw .forbidden }
    }

    func listRooms(_ request: ListRoomsRequest, context: ServerContext) async throws(Rooms.ListRoomsError) -> ListRoomsResponse {
        let all = (1...5).map { Room(id: "r\($0)", title: "Room \($0)", memberCount: UInt32($0)) }
        let start = request.after.flatMap { after in all.firstIndex { $0.id == after }.map { $0 + 1 } } ?? 0
        let page = Array(all[start...].prefix(Int(request.limit)))
        return ListRoomsResponse(rooms: page, next: start + page.count < all.count ? page.last?.id : nil)
    }

    func getRoom(_ request: GetRoomRequest, context: ServerContext) async throws(Rooms.GetRoomError) -> Room {
        guard request.roomId == "r1" else { throw .notFound }
        return Room(id: "r1", title: "Room 1")
    }

    func postMessage(_ request: PostMessageRequest, context: ServerContext) async throws(Rooms.PostMessageError) -> Post {
        guard !request.text.isEmpty else { throw .invalid(ValidationError(field: "text", reason: "empty")) }
        guard request.roomId == "r1" else { throw .notAMember }
        // The idempotency key arrives as a header and binds back to the field.
        return Post(id: "p-\(request.clientId)", roomId: request.roomId, author: "me", text: request.text)
    }

    func lookUp(_ request: LookUpRequest, context: ServerContext) async throws(Directory.LookUpError) -> PublicProfile {
        guard request.handle == "ada" else { throw .notFound }
        return PublicProfile(handle: "ada", displayName: "Ada")
    }

    func setStatus(_ request: Status, context: ServerContext) async throws(Presence.SetStatusError) {
        statuses.withLock { $0.append(request) }
    }
}

/// Collects pushed posts.
final class Inbox: RoomsEventListener, @unchecked Sendable {
    let posts = Locked<[Post]>([])
    func postReceived(_ payload: Post, context: EventContext) async throws {
        posts.withLock { $0.append(payload) }
    }
}

/// The generated SDK against a real ChatServer on a loopback port.
@Suite(.timeLimit(.minutes(1)))
struct RoomsOverWebSocketTests {
    @Test func typedCallsAndPushesOverALoopbackChatServer() async throws {
        let backend = RoomsBackend()
        // One backend serves three services; each namespace names its own routes.
        let server = try ChatServer(routes: Rooms.routes(backend) + Directory.routes(backend) + Presence.routes(backend)
                                    + Moderation.routes(backend))
        defer { server.stop() }
        let inbox = Inbox()
        let account = try await ChatClient.connectAuthenticated(
            to: server.url, credentials: .init(username: "ada", deviceID: 1, password: "secret"),
            options: .init(keepalive: nil)
        ) { push in await Rooms.dispatch(push, to: inbox) }
        let rooms = RoomsClient(transport: account)

        // A paged list, then the next page.
        let first = try await rooms.listRooms(limit: 2)
        #expect(first.rooms.map(\.id) == ["r1", "r2"])
        let second = try await rooms.listRooms(limit: 2, after: first.next)
        #expect(second.rooms.map(\.id) == ["r3", "r4"])
        // Every room, pages fetched as needed by the generated paginator.
        var all: [String] = []
        for try await room in rooms.listRoomsItems(pageSize: 2) { all.append(room.id) }
        #expect(all == ["r1", "r2", "r3", "r4", "r5"])

        // A post, and the endpoint's own errors, typed.
        let post = await rooms.postMessage(PostMessageRequest(roomId: "r1", text: "hello", clientId: "c-1"))
        #expect(post.value?.id == "p-c-1")
        #expect(await rooms.postMessage(PostMessageRequest(roomId: "r9", text: "hi", clientId: "c-2")).endpointError == .notAMember)
        #expect(await rooms.postMessage(PostMessageRequest(roomId: "r1", text: "", clientId: "c-3")).endpointError
                == .invalid(ValidationError(field: "text", reason: "empty")))
        #expect(await rooms.getRoom(GetRoomRequest(roomId: "nope")).endpointError == .notFound)

        // A service from a schema file in a subfolder (admin/moderation.sb), path-bound fields.
        let moderation = MockableModeration(client: ModerationClient(transport: account))
        #expect(await moderation.ban("grace", from: "r1", asModerator: false).endpointError == .forbidden)
        #expect(await moderation.ban("grace", from: "r1", asModerator: true).isSuccess)

        // The committed Presence SDK rides the same connection.
        #expect(await PresenceClient(transport: account).setStatus(Status(availability: .away, note: "lunch")).isSuccess)
        #expect(backend.statuses.withLock { $0 } == [Status(availability: .away, note: "lunch")])

        // A push reaches the listener and is acknowledged.
        let client = try #require(await server.client(at: 0))
        let pushed = Post(id: "p-9", roomId: "r1", author: "grace", text: "hi ada")
        let answer = await client.push(ServerRequest(verb: "PUT", path: "/v1/events/post", body: pushed.serializedData()))
        #expect(answer?.status == 200)
        #expect(inbox.posts.withLock { $0 } == [pushed])
        await account.close()

        // The unauthenticated connection backs the Directory only.
        let anonymous = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let directory = DirectoryClient(transport: anonymous)
        #expect(try await directory.lookUp(handle: "ada").displayName == "Ada")
        #expect(await directory.lookUp(LookUpRequest(handle: "bob")).endpointError == .notFound)
        await anonymous.close()
    }
}

/// Calls `ban` with the moderator header a real app would get from its session.
struct MockableModeration {
    let client: any ModerationService
    func ban(_ handle: String, from roomId: String, asModerator: Bool) async -> RequestResult<Void, Moderation.BanError> {
        await client.ban(BanRequest(roomId: roomId, handle: handle), options: CallOptions(headers: asModerator ? ["X-Moderator": "yes"] : [:]))
    }
}

/// The Accounts module generates internal types from the schema folder its configuration names.
@Suite struct AccountsTests {
    @Test func internalGeneratedTypesBackThePublicAPI() {
        #expect(accountSummary(handle: "ada", displayName: "Ada") == "Ada (@ada)")
        // The favourite room crosses the wire inside an Account: a type of the imported package.
        #expect(accountSummary(handle: "ada", displayName: "Ada", favoriteRoom: Room(id: "r1", title: "Lobby")) == "Ada (@ada), likes Lobby")
    }
}

/// Code that takes the service protocol can be tested with the generated mock.
struct RoomTitles {
    let rooms: any RoomsService
    func titles() async -> [String] {
        switch await rooms.listRooms(ListRoomsRequest(limit: 50)) {
        case let .success(page): return page.rooms.map(\.title)
        case .nonSuccess(.unauthorized): return ["(signed out)"]
        case .nonSuccess, .failure: return []
        }
    }
}

@Suite struct RoomsMockTests {
    @Test func theGeneratedMockServesScriptedResultsAndRecordsCalls() async {
        let mock = MockRoomsService()
        mock.listRoomsMock.enqueue(
            .success(ListRoomsResponse(rooms: [Room(id: "r1", title: "General")])),
            .nonSuccess(.unauthorized))
        let titles = RoomTitles(rooms: mock)
        #expect(await titles.titles() == ["General"])
        #expect(await titles.titles() == ["(signed out)"])
        #expect(mock.listRoomsMock.calls == [ListRoomsRequest(limit: 50), ListRoomsRequest(limit: 50)])
        // An endpoint nobody stubbed fails loudly, as a typed transport failure.
        #expect(await mock.getRoom(GetRoomRequest(roomId: "r1")).transportError == .notStubbed(rpcName: "example.rooms.Rooms/GetRoom"))
    }
}

/// A push payload is shown only to the account it names.
@Suite struct PushPayloadTests {
    @Test func aNotificationForAnotherAccountIsRefused() throws {
        let notification = PostsNotification(accountId: "ada", posts: [NotifiedPost(author: "grace", text: "hi")])
        let json = try notification.encodedBody(.json)
        #expect(PostsNotification.decode(json, encoding: .json, loggedInUser: "ada") == .success(notification))
        #expect(PostsNotification.decode(json, encoding: .json, loggedInUser: "bob") == .failure(.addressedToAnotherUser("ada")))
    }
}
