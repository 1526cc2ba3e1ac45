import Foundation
@testable import SwitchboardIO
@testable import SwitchboardWebSocket
import Testing

/// Several parties pause one connection's reading; it reads only when none holds it, and a
/// closing connection reads whatever they hold (from the client review: direct delivery's
/// buffer resuming undid the large-message queue's pause, and that queue then grew unbounded).
struct ReadingGateTests {
    private final class RecordingChannel: ByteChannel, @unchecked Sendable {
        let lock = NSLock()
        var calls: [Bool] = []
        let loop = EventLoopGroup.shared.next()
        var queuedByteCount: Int { 0 }
        func activate(delegate: any ChannelDelegate, handshakeDone: (@Sendable (String?) -> Void)?) {}
        func write(_ bytes: [UInt8], completion: (@Sendable (String?) -> Void)?) -> SocketChannel.WriteResult { .written }
        func setReading(_ on: Bool) { lock.withLock { calls.append(on) } }
        func closeAfterFlushing(timeout: Duration) {}
        func close(reason: String?) {}
        var reading: Bool? { lock.withLock { calls.last } }
    }

    @Test func readsOnlyWhenNoPartyHoldsItPaused() {
        let channel = RecordingChannel()
        let gate = ReadingGate(channel: channel)
        gate.start()
        #expect(channel.reading == true)
        gate.setPaused(true, by: .directSink)
        gate.setPaused(true, by: .application)
        #expect(channel.reading == false && gate.isPaused)
        gate.setPaused(false, by: .directSink)
        #expect(channel.reading == false, "the application still holds it")
        gate.setPaused(false, by: .application)
        #expect(channel.reading == true && !gate.isPaused)
        gate.setPaused(true, by: .inboundBudget)
        gate.forceOn()
        #expect(channel.reading == true, "closing reads whatever the parties hold")
        gate.setPaused(true, by: .application)
        #expect(channel.reading == true)
    }

    @Test func aPauseBeforeTheStartHolds() {
        let channel = RecordingChannel()
        let gate = ReadingGate(channel: channel)
        gate.setPaused(true, by: .inboundBudget)
        gate.start()
        #expect(channel.reading == false)
        #expect(gate.isPaused)
        gate.setPaused(false, by: .inboundBudget)
        #expect(channel.reading == true)
    }

    @Test func countsTheTimeReadingWasOff() async throws {
        let gate = ReadingGate(channel: RecordingChannel())
        gate.start()
        #expect(gate.pausedTime(upTo: .now) == .zero)
        gate.setPaused(true, by: .application)
        try await Task.sleep(for: .milliseconds(50))
        gate.setPaused(false, by: .application)
        let off = gate.pausedTime(upTo: .now)
        #expect(off >= .milliseconds(50))
        try await Task.sleep(for: .milliseconds(20))
        #expect(gate.pausedTime(upTo: .now) == off, "reading again, the count stands still")
    }
}
