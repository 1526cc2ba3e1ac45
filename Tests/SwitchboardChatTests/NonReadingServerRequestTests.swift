import Foundation
import SwitchboardChat
import SwitchboardIO
import SwitchboardRuntime
import SwitchboardWebSocket
import Testing

/// A server that upgrades and then never reads: once the write queue is full, a request is
/// refused at once as `retryLater` (it was not sent, the connection is still open), not as
/// `disconnected`, which says the connection is gone (from the client review).
@Suite(.timeLimit(.minutes(2)))
struct NonReadingServerRequestTests {
    @Test func requestsPastAFullWriteQueueAreRetryLater() async throws {
        let listener = try TCPListener()
        let held = Locked<[TCPSocket]>([])
        defer {
            listener.close()
            for socket in held.current { socket.close() }
        }
        Thread.detachNewThread {
            guard let socket = listener.accept() else { return }
            held.withLock { $0.append(socket) }
            answerWebSocketUpgrade(on: socket)
        }
        // Requests of 1 MiB, past the default request limit, to fill the write queue.
        var options = ChatConnectionOptions(keepalive: nil)
        options.maximumRequestSize = 4 << 20
        let connection = try await ChatClient.connectUnauthenticated(to: URL(string: "ws://127.0.0.1:\(listener.port)/v1/websocket/")!,
                                                                    options: options)
        let endpoint = EndpointDescriptor(rpcName: "test.Upload/Put", verb: "PUT", pathTemplate: "/v1/upload", auth: .none)
        let request = RPCRequest(endpoint: endpoint, path: "/v1/upload", body: Data(repeating: 7, count: 1 << 20),
                                 deadline: .now.advanced(by: .seconds(2)))
        let calls = (0..<40).map { _ in
            Task { () -> TransportError? in
                do throws(TransportError) {
                    _ = try await connection.send(request)
                    return nil
                } catch {
                    return error
                }
            }
        }
        var retryLater = 0, disconnected = 0
        for call in calls {
            switch await call.value {
            case .retryLater?: retryLater += 1
            case .disconnected?: disconnected += 1
            default: break
            }
        }
        #expect(retryLater > 0, "the write queue filled and requests were refused")
        #expect(disconnected == 0)
        #expect(connection.closeInfo == nil, "the connection stays")
        await connection.close()
    }
}
