import Foundation
import SignalChat
import SwitchboardRuntime
import SwitchboardWebSocket

/// A chat connection: Signal's WebSocket RPC. Requests go out in the `WebSocketMessage`
/// envelope with our own ids and their responses are matched by id, in any order; requests
/// the server pushes are handed to `onPush` strictly in arrival order, one at a time.
///
/// `Auth` is `Authenticated` or `Unauthenticated`, so each connection hands out only the
/// generated clients its kind allows.
public final class ChatConnection<Auth: AuthMode>: RPCTransport, @unchecked Sendable {
    /// Decides how to answer one pushed request; awaited before the next is read.
    public typealias PushHandler = @Sendable (ServerRequest) async -> EventOutcome

    private let socket: WebSocketConnection
    private let pending = PendingRequests<Result<RPCResponse, TransportError>>(firstID: 0)
    private let onPush: PushHandler

    private let eventSink: AsyncStream<ChatConnectionEvent>.Continuation

    /// Headers of the upgrade response (`X-Signal-Timestamp`, `X-Signal-Alert`).
    public var upgradeHeaders: [HTTPHeaderField] { socket.handshakeHeaders }

    /// The connection's life: `connected` with the upgrade's headers first, `disconnected`
    /// with the reason last, then the stream ends. Buffered, so a late reader misses nothing.
    public let events: AsyncStream<ChatConnectionEvent>

    init(socket: WebSocketConnection, onPush: @escaping PushHandler) {
        self.socket = socket
        self.onPush = onPush
        (events, eventSink) = AsyncStream.makeStream(of: ChatConnectionEvent.self)
        eventSink.yield(.connected(ChatUpgradeInfo(headers: socket.handshakeHeaders)))
        Task { await self.readLoop() }
    }

    /// How the connection ended, once it has.
    public var closeInfo: WebSocketCloseInfo? { socket.closeInfo }

    /// Why the connection ended, in chat terms (4401, 4409, a protocol error...), once it has.
    public var disconnectReason: ChatConnectionError? { closeInfo.map(ChatConnectionError.init(closeInfo:)) }

    /// Closes the connection; every pending request fails with `disconnected`.
    public func close(code: WebSocketCloseCode = .normalClosure) async {
        _ = await socket.close(code: code)
        failAll("closed by the client")
    }

    /// Waits until the connection ends.
    public func waitUntilClosed() async -> WebSocketCloseInfo { await socket.waitUntilClosed() }

    public func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        let id = pending.makeID()
        let frame = WebSocketMessage.request(verb: request.verb, path: request.path, headers: request.headers, body: request.body, id: id)
        let result = await pending.wait(for: id, cancelled: .failure(.cancelled)) { [socket, pending] in
            Task {
                do throws(WebSocketError) {
                    try await socket.send(binary: frame.serializedData())
                } catch {
                    pending.resume(id, with: .failure(.disconnected(reason: error.description)))
                }
            }
        }
        return try result.get()
    }

    private func failAll(_ reason: String) {
        pending.close(with: .failure(.disconnected(reason: reason)))
    }

    private func readLoop() async {
        for await message in socket.messages {
            guard case let .binary(data) = message, let frame = try? WebSocketMessage(serializedData: data) else { continue }
            switch frame.type {
            case .response?:
                guard let response = frame.response, let id = response.id else { continue }
                // A response to an unknown id (late, or a server bug) is ignored.
                pending.resume(id, with: .success(RPCResponse(
                    status: Int(response.status ?? 0), headers: EnvelopeHeaders.decode(response.headers),
                    body: response.body ?? Data(), message: response.message)))
            case .request?:
                guard let request = frame.request, let verb = request.verb, let path = request.path else { continue }
                let push = ServerRequest(verb: verb, path: path, headers: EnvelopeHeaders.decode(request.headers), body: request.body)
                let outcome = await onPush(push)
                let answer: RPCResponse?
                switch outcome {
                case let .acknowledge(response): answer = response
                case .unknown: answer = EventOutcome.notFound
                case .withhold: answer = nil
                }
                if let answer, let id = request.id {
                    try? await socket.send(binary: WebSocketMessage.response(to: id, answer).serializedData())
                }
            default:
                continue
            }
        }
        // The server closed (or the connection dropped): answer at once and fail what is pending.
        let info = await socket.close()
        let reason = ChatConnectionError(closeInfo: info)
        failAll(reason.description)
        eventSink.yield(.disconnected(reason))
        eventSink.finish()
    }
}

/// Opens chat connections.
public enum ChatClient {
    /// Account credentials for the authenticated connection: `user.device:password`, sent as Basic auth.
    public struct Credentials: Sendable, Hashable, CustomStringConvertible {
        public var username: String
        public var deviceID: UInt32
        public var password: String

        public init(username: String, deviceID: UInt32, password: String) {
            self.username = username
            self.deviceID = deviceID
            self.password = password
        }

        var authorization: String {
            "Basic " + Data("\(username).\(deviceID):\(password)".utf8).base64EncodedString()
        }

        public var description: String { "Credentials(\(username).\(deviceID), password: [REDACTED])" }
    }

    /// Connects with the account's credentials.
    public static func connectAuthenticated(
        to url: URL, credentials: Credentials, headers: [HTTPHeaderField] = [],
        onPush: @escaping ChatConnection<Authenticated>.PushHandler = { _ in .unknown }
    ) async throws(ChatConnectionError) -> ChatConnection<Authenticated> {
        let socket = try await open(url, headers: headers + [HTTPHeaderField(name: "Authorization", value: credentials.authorization)])
        return ChatConnection(socket: socket, onPush: onPush)
    }

    /// Connects without credentials.
    public static func connectUnauthenticated(
        to url: URL, headers: [HTTPHeaderField] = [],
        onPush: @escaping ChatConnection<Unauthenticated>.PushHandler = { _ in .unknown }
    ) async throws(ChatConnectionError) -> ChatConnection<Unauthenticated> {
        let socket = try await open(url, headers: headers)
        return ChatConnection(socket: socket, onPush: onPush)
    }

    private static func open(_ url: URL, headers: [HTTPHeaderField]) async throws(ChatConnectionError) -> WebSocketConnection {
        do {
            return try await WebSocketClient.connect(to: url, options: .init(headers: headers))
        } catch {
            throw ChatConnectionError(connectFailure: error)
        }
    }
}
