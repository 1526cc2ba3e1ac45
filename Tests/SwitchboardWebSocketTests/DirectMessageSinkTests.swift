import Foundation
import SwitchboardRuntime
@testable import SwitchboardWebSocket
import Testing

/// Messages that arrive before the application attaches its handler (a server's handler task
/// that has not started yet) wait in a bounded buffer: past the limit, reading pauses until the
/// handler comes, and then everything is delivered in order.
@Suite struct DirectMessageSinkTests {
    @Test func aFloodBeforeTheHandlerPausesReadingThenAllArriveInOrder() {
        let pauses = Locked<[Bool]>([])
        let sink = DirectMessageSink(limit: 1 << 20) { paused in pauses.withLock { $0.append(paused) } }
        var keptBuffers = 0
        for index in 0..<100 {
            var buffer = [UInt8](repeating: UInt8(index), count: 64 * 1024)
            let before = buffer.withUnsafeBufferPointer { $0.baseAddress }
            sink.receive(ReceivedWebSocketMessage(isText: false, payload: buffer[0..<16]))
            // The parser writes its next read there: a copy now means the sink kept the buffer.
            buffer[0] = 255
            if buffer.withUnsafeBufferPointer({ $0.baseAddress }) != before { keptBuffers += 1 }
        }
        #expect(keptBuffers == 0, "waiting messages own their bytes")
        // 100 × (16 + 256) bytes is under 1 MiB: no pause yet; 4,000 more pass it.
        #expect(pauses.current.isEmpty)
        for _ in 0..<4000 { sink.receive(ReceivedWebSocketMessage(isText: false, payload: [1, 2, 3][...])) }
        #expect(pauses.current == [true], "paused once, before the buffer grew past its limit by much")
        let order = Locked<[UInt8]>([])
        sink.attach { message in order.withLock { $0.append(message.payload.first ?? 0) } }
        #expect(order.current.count == 4100)
        #expect(Array(order.current.prefix(100)) == (0..<100).map(UInt8.init))
        #expect(pauses.current == [true, false], "reading resumes once the handler has them")
    }
}

/// A handler that ends its own connection from inside delivery re-enters the sink on the same
/// thread (the end detaches it): with a plain lock that hung the event loop.
@Suite struct DirectMessageSinkReentryTests {
    @Test func aHandlerThatDetachesItsSinkDoesNotHang() async throws {
        let sink = DirectMessageSink(limit: 1 << 20) { _ in }
        let handled = Locked(0)
        sink.attach { _ in
            handled.withLock { $0 += 1 }
            sink.detach()
        }
        let done = Locked(false)
        let thread = Thread {
            sink.receive(ReceivedWebSocketMessage(isText: false, payload: [1][...]))
            sink.receive(ReceivedWebSocketMessage(isText: false, payload: [2][...]))
            done.withLock { $0 = true }
        }
        thread.start()
        for _ in 0..<2000 where !done.current { try await Task.sleep(for: .milliseconds(5)) }
        #expect(done.current, "delivery returned")
        #expect(handled.current == 1, "detached after the first message")
    }
}
