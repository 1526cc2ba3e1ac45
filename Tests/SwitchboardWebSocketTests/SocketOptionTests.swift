import Foundation
@testable import SwitchboardIO
@testable import SwitchboardWebSocket
import Testing

/// Small frames go out at once: every socket, dialled or accepted, has Nagle's delay off.
@Suite struct SocketOptionTests {
    static func noDelay(_ socket: TCPSocket) -> Int32 {
        var value: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(socket.descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &value, &size)
        return value
    }

    @Test func dialledAndAcceptedSocketsSendWithoutDelay() throws {
        let listener = try TCPListener()
        defer { listener.close() }
        let dialled = try TCPSocket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
        defer { dialled.close() }
        let accepted = try #require(listener.accept())
        defer { accepted.close() }
        #expect(Self.noDelay(dialled) != 0)
        #expect(Self.noDelay(accepted) != 0)
    }
}
