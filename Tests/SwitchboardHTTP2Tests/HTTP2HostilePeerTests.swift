import AllocationCounter
import Foundation
import PeerSupport
@testable import SwitchboardHTTP2
import Testing

/// A hostile peer's frames fed straight into the sans-IO core: each classic attack ends in
/// the right GOAWAY or RST_STREAM code, with bounded state and no hang.
@Suite struct HTTP2HostilePeerTests {
    /// A server that has read the client preface and SETTINGS.
    static func server(_ configure: (inout HTTP2ConnectionConfiguration) -> Void = { _ in }) -> HTTP2Connection {
        var configuration = HTTP2ConnectionConfiguration()
        configure(&configuration)
        var server = HTTP2Connection(role: .server, configuration: configuration)
        var hello = HTTP2ConnectionPreface.bytes
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &hello)
        _ = server.receive(hello)
        _ = server.takeOutput()
        return server
    }

    static func headers(_ stream: UInt32, _ list: [HPACKHeader] = ConnectionPair.request, endStream: Bool = false) -> [UInt8] {
        var encoder = HPACKEncoder()
        var block: [UInt8] = []
        encoder.encode(list, into: &block)
        return HTTP2FrameTests.encode([HTTP2Frame(streamID: stream, payload: .headers(fragment: block[...], endStream: endStream, endHeaders: true))])
    }

    static func frame(_ stream: UInt32, _ payload: HTTP2Frame.Payload) -> [UInt8] {
        HTTP2FrameTests.encode([HTTP2Frame(streamID: stream, payload: payload)])
    }

    /// What the server wrote back, as frames.
    static func answer(_ server: inout HTTP2Connection) throws -> [HTTP2Frame] {
        try HTTP2FrameTests.frames(in: server.takeOutput(), maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize)
    }

    static func goAwayCode(_ frames: [HTTP2Frame]) -> HTTP2ErrorCode? {
        for frame in frames { if case let .goAway(_, code, _) = frame.payload { return code } }
        return nil
    }

    static func resetCode(_ frames: [HTTP2Frame], stream: UInt32) -> HTTP2ErrorCode? {
        for frame in frames where frame.streamID == stream { if case let .rstStream(code) = frame.payload { return code } }
        return nil
    }

    /// Feeds `bytes` to a fresh server and returns the GOAWAY code it answered with.
    static func connectionError(_ bytes: [UInt8], _ configure: (inout HTTP2ConnectionConfiguration) -> Void = { _ in }) throws -> HTTP2ErrorCode? {
        var server = server(configure)
        let events = server.receive(bytes)
        let code = goAwayCode(try answer(&server))
        #expect(events.failure?.code == code, "the event and the GOAWAY agree")
        #expect(server.isClosed == (code != nil))
        return code
    }

    @Test func notSpeakingHTTP2AtAll() throws {
        var server = HTTP2Connection(role: .server)
        _ = server.takeOutput()
        let events = server.receive(Array("GET / HTTP/1.1\r\nHost: example\r\n\r\n".utf8))
        #expect(events.failure?.code == .protocolError)
        #expect(Self.goAwayCode(try Self.answer(&server)) == .protocolError)
        // A preface followed by something other than SETTINGS.
        var late = HTTP2Connection(role: .server)
        let lateEvents = late.receive(HTTP2ConnectionPreface.bytes + Self.frame(0, .ping(1, ack: false)))
        #expect(lateEvents.failure?.code == .protocolError)
        // An acknowledgement in place of the peer's own SETTINGS (it passed for the preface).
        var acking = HTTP2Connection(role: .client)
        let ackEvents = acking.receive(Self.frame(0, .settings([], ack: true)))
        #expect(ackEvents.failure?.code == .protocolError)
    }

    @Test func framesOnIdleAndClosedStreams() throws {
        #expect(try Self.connectionError(Self.frame(1, .data([1], endStream: false, flowControlledLength: 1))) == .protocolError)
        #expect(try Self.connectionError(Self.frame(3, .windowUpdate(increment: 5))) == .protocolError)
        #expect(try Self.connectionError(Self.frame(3, .rstStream(.cancel))) == .protocolError)
        #expect(try Self.connectionError(Self.headers(2)) == .protocolError, "clients open odd streams only")
        // Stream 1 completes both ways; more DATA or HEADERS on it is STREAM_CLOSED.
        var server = Self.server()
        _ = server.receive(Self.headers(1, endStream: true))
        try server.sendHeaders(ConnectionPair.response, streamID: 1, endStream: true)
        _ = server.takeOutput()
        #expect(server.receive(Self.frame(1, .data([1], endStream: false, flowControlledLength: 1))).failure?.code == .streamClosed)
        // Stream ids must grow: a lower new one is an unexpected id (RFC 9113 §5.1.1).
        var again = Self.server()
        _ = again.receive(Self.headers(5, endStream: true))
        #expect(again.receive(Self.headers(3)).failure?.code == .protocolError)
        // Frames after the peer's own END_STREAM are a stream error.
        var half = Self.server()
        _ = half.receive(Self.headers(1, endStream: true))
        _ = half.takeOutput()
        let events = half.receive(Self.frame(1, .data([1], endStream: false, flowControlledLength: 1)))
        #expect(events.closure(of: 1) == .resetHere(HTTP2ProtocolViolation(.streamClosed, "DATA after the peer ended stream 1")))
        #expect(Self.resetCode(try Self.answer(&half), stream: 1) == .streamClosed)
    }

    /// Until the client acknowledges the server's SETTINGS it may still count on the default
    /// window (65,535) for a stream it opens, whatever smaller one the server asked for
    /// (RFC 9113 §6.5.3): that much is no FLOW_CONTROL_ERROR, one byte more is. Acknowledged,
    /// the stream's window moves by the difference (a run of our own client and server, whose
    /// client wrote before it read the server's SETTINGS, failed a stream here).
    @Test func aSmallerWindowBindsTheClientOnlyOnceAcknowledged() throws {
        func data(_ stream: UInt32, _ count: Int) -> [UInt8] {
            Self.frame(stream, .data(ArraySlice(repeating: 0, count: count), endStream: false, flowControlledLength: count))
        }
        // One frame a stream, so no window update of ours falls between its bytes.
        var server = Self.server {
            $0.initialStreamWindowSize = 8192
            $0.maxFrameSize = 100_000
        }
        _ = server.receive(Self.headers(1) + Self.headers(3))
        #expect(server.receive(data(1, 65_535)).failure == nil)
        #expect(Self.resetCode(try Self.answer(&server), stream: 1) == nil, "65,535 bytes before the acknowledgement")
        // Before the acknowledgement too: one byte past the default is an error.
        _ = server.receive(data(3, 65_536))
        #expect(Self.resetCode(try Self.answer(&server), stream: 3) == .flowControlError)
        // Acknowledged: a new stream has the 8 KiB asked for.
        _ = server.receive(Self.frame(0, .settings([], ack: true)) + Self.headers(5))
        _ = server.takeOutput()
        _ = server.receive(data(5, 8193))
        #expect(Self.resetCode(try Self.answer(&server), stream: 5) == .flowControlError)
    }

    @Test func flowControlViolations() throws {
        // Past the stream's window: that stream is reset, the connection lives.
        var server = Self.server { $0.initialStreamWindowSize = 10 }
        _ = server.receive(Self.frame(0, .settings([], ack: true)) + Self.headers(1))
        let events = server.receive(Self.frame(1, .data(ArraySlice(repeating: 0, count: 11), endStream: false, flowControlledLength: 11)))
        #expect(events.failure == nil)
        #expect(Self.resetCode(try Self.answer(&server), stream: 1) == .flowControlError)
        // Past the connection's window (65,535 when it is never raised): GOAWAY. One frame,
        // since what is handed up is given back at once.
        let bytes = Self.headers(1) + Self.frame(1, .data(ArraySlice(repeating: 0, count: 70_000), endStream: false, flowControlledLength: 70_000))
        #expect(try Self.connectionError(bytes) {
            $0.connectionWindowSize = 65_535
            $0.maxFrameSize = 100_000
        } == .flowControlError)
        // A window grown past 2^31-1.
        #expect(try Self.connectionError(Self.frame(0, .windowUpdate(increment: 0x7fff_ffff))) == .flowControlError)
        #expect(try Self.connectionError(Self.frame(0, .windowUpdate(increment: 0))) == .protocolError)
        var zero = Self.server()
        _ = zero.receive(Self.headers(1))
        _ = zero.receive(Self.frame(1, .windowUpdate(increment: 0)))
        #expect(Self.resetCode(try Self.answer(&zero), stream: 1) == .protocolError)
        #expect(try Self.connectionError(Self.frame(0, .settings([HTTP2Setting(.initialWindowSize, 0x8000_0000)], ack: false))) == .flowControlError)
    }

    @Test func oversizedFramesAndBadSettings() throws {
        var big: [UInt8] = []
        HTTP2FrameEncoder.writeHeader(length: 16_385, type: .data, flags: 0, streamID: 1, into: &big)
        #expect(try Self.connectionError(big) == .frameSizeError)
        #expect(try Self.connectionError(Self.frame(0, .settings([HTTP2Setting(.maxFrameSize, 100)], ack: false))) == .protocolError)
        #expect(try Self.connectionError(Self.frame(0, .settings([HTTP2Setting(.enablePush, 2)], ack: false))) == .protocolError)
        #expect(try Self.connectionError(Self.frame(1, .pushPromise(promisedStreamID: 2, fragment: [], endHeaders: true))) == .protocolError)
    }

    @Test func continuationFloodsAndInterleaving() throws {
        // Endless empty CONTINUATION frames.
        var flood = Self.frame(1, .headers(fragment: [0x82], endStream: false, endHeaders: false))
        for _ in 0..<1000 { flood += Self.frame(1, .continuation(fragment: [], endHeaders: false)) }
        #expect(try Self.connectionError(flood) == .enhanceYourCalm)
        // A block that keeps growing.
        var growing = Self.frame(1, .headers(fragment: [0x82], endStream: false, endHeaders: false))
        for _ in 0..<10 { growing += Self.frame(1, .continuation(fragment: ArraySlice(repeating: 0x40, count: 16_000), endHeaders: false)) }
        #expect(try Self.connectionError(growing) == .enhanceYourCalm)
        // Anything else inside a header block.
        let interleaved = Self.frame(1, .headers(fragment: [0x82], endStream: false, endHeaders: false)) + Self.frame(0, .ping(1, ack: false))
        #expect(try Self.connectionError(interleaved) == .protocolError)
        let otherStream = Self.frame(1, .headers(fragment: [0x82], endStream: false, endHeaders: false)) + Self.frame(3, .continuation(fragment: [], endHeaders: true))
        #expect(try Self.connectionError(otherStream) == .protocolError)
        #expect(try Self.connectionError(Self.frame(1, .continuation(fragment: [], endHeaders: true))) == .protocolError)
    }

    /// Empty CONTINUATION frames cost the peer its control-frame budget, as other frames
    /// that carry nothing do, and not only the per-block count.
    @Test func emptyContinuationFramesSpendTheControlBudget() throws {
        var flood = Self.frame(1, .headers(fragment: [0x82], endStream: false, endHeaders: false))
        for _ in 0..<20 { flood += Self.frame(1, .continuation(fragment: [], endHeaders: false)) }
        var server = Self.server { $0.controlFrameLimit = HTTP2RateLimit(burst: 10, perSecond: 1) }
        let events = server.receive(flood)
        #expect(Self.goAwayCode(try Self.answer(&server)) == .enhanceYourCalm)
        #expect(events.failure?.reason.contains("empty CONTINUATION") == true, "\(String(describing: events.failure))")
        // Within the budget, the same block is only limited by its count of frames (32).
        #expect(try Self.connectionError(flood) == nil)
    }

    /// A header block spread over many CONTINUATION frames grows in place: the work of each
    /// frame follows its own size, not the size of the block so far (counted in bytes the
    /// core allocates, which does not depend on the machine's speed).
    @Test(.enabled(if: sb_allocation_counting_available() != 0, "allocations are counted with glibc, without sanitizers"))
    func aGrowingHeaderBlockIsNotCopiedPerFrame() throws {
        let frameSize = 2_000, frames = 31
        var bytes = Self.frame(1, .headers(fragment: ArraySlice(repeating: 0x82, count: frameSize), endStream: false, endHeaders: false))
        for _ in 0..<frames { bytes += Self.frame(1, .continuation(fragment: ArraySlice(repeating: 0x82, count: frameSize), endHeaders: false)) }
        var server = Self.server()
        sb_allocation_counting_begin()
        let events = server.receive(bytes)
        let allocated = sb_allocation_counting_end()
        #expect(events.failure == nil)
        let total = frameSize * (frames + 1)
        // Copying the block at every frame allocates about frames / 2 times the block (about
        // 1 MB here); growing it, a few times the block.
        #expect(allocated < 6 * total, "\(allocated) bytes allocated for a block of \(total)")
    }

    @Test func hpackBombs() throws {
        // A table size update above what was advertised.
        #expect(try Self.connectionError(Self.frame(1, .headers(fragment: [0x3F, 0xE1, 0x7F], endStream: false, endHeaders: true))) == .compressionError)
        // One big header inserted into the table, then referenced many times: the decoded list
        // passes MAX_HEADER_LIST_SIZE while the block stays tiny. The stream is refused, the
        // connection (and its HPACK state) lives.
        var encoder = HPACKEncoder()
        var block: [UInt8] = []
        encoder.encode(ConnectionPair.request, into: &block)
        // x-bomb: 3,000 b's, as a literal added to the table (so it is index 62), then
        // that index two hundred times.
        block += [0x40, 0x06] + Array("x-bomb".utf8) + [0x7F, 0xB9, 0x16] + [UInt8](repeating: UInt8(ascii: "b"), count: 3000)
        block += [UInt8](repeating: 0xBE, count: 200)
        var server = Self.server()
        let events = server.receive(Self.frame(1, .headers(fragment: block[...], endStream: true, endHeaders: true)))
        #expect(events.isEmpty, "nothing reaches the layer above")
        #expect(Self.resetCode(try Self.answer(&server), stream: 1) == .protocolError)
        #expect(server.receive(Self.headers(3, endStream: true)).contains(.headers(streamID: 3, ConnectionPair.request, endStream: true)))
    }

    @Test func malformedRequestsAreRefusedOneByOne() throws {
        let bad: [[HPACKHeader]] = [
            [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http")],
            ConnectionPair.request + [HPACKHeader("Upper", "x")],
            ConnectionPair.request + [HPACKHeader("connection", "keep-alive")],
            ConnectionPair.request + [HPACKHeader("te", "gzip")],
            ConnectionPair.request + [HPACKHeader(":status", "200")],
            [HPACKHeader("x-first", "1")] + ConnectionPair.request,
            ConnectionPair.request + [HPACKHeader("x-value", "a\r\nb")],
            ConnectionPair.request + [HPACKHeader("content-length", "5")],
            ConnectionPair.request + [HPACKHeader("upgrade", "h2c")],
            ConnectionPair.request + [HPACKHeader("keep-alive", "5")],
            ConnectionPair.request + [HPACKHeader("proxy-connection", "close")],
            ConnectionPair.request + [HPACKHeader("transfer-encoding", "chunked")],
            ConnectionPair.request + [HPACKHeader("x-value", " leading")],
            ConnectionPair.request + [HPACKHeader("x-value", "trailing\t")],
            ConnectionPair.request + [HPACKHeader("x-value", "nul\u{0}inside")],
            // (In responses and trailers, whitespace at either end is let through: see HTTP2PeerRulesTests.)
        ]
        var server = Self.server()
        for (index, list) in bad.enumerated() {
            let stream = UInt32(index * 2 + 1)
            let events = server.receive(Self.headers(stream, list, endStream: true))
            #expect(events.isEmpty, "\(list)")
            #expect(Self.resetCode(try Self.answer(&server), stream: stream) == .protocolError, "\(list)")
        }
        #expect(!server.isClosed)
    }

    /// Streams the peer resets while they wait for window leave the list of blocked streams
    /// (they stayed, and every flush and stream end walked all of them). Found by review.
    @Test func resetBlockedStreamsLeaveNothingBehind() throws {
        var server = Self.server()
        _ = server.receive(Self.headers(1, endStream: true))
        try server.sendHeaders(ConnectionPair.response, streamID: 1, endStream: false)
        // The connection's window (65,535, never raised) is used up.
        try server.sendData(Array(repeating: 0, count: 65_535), streamID: 1, endStream: false)
        for id in stride(from: UInt32(3), through: 401, by: 2) {
            _ = server.receive(Self.headers(id, endStream: true))
            try server.sendHeaders(ConnectionPair.response, streamID: id, endStream: false)
            try server.sendData([1], streamID: id, endStream: true)
            _ = server.receive(Self.frame(id, .rstStream(.cancel)))
            _ = server.takeOutput()
        }
        #expect(server.blocked.count <= server.streams.count, "\(server.blocked.count) blocked, \(server.streams.count) streams")
    }

    /// A stream blocked on its own window, let out by a WINDOW_UPDATE for it and then reset,
    /// leaves the list too (it stayed listed with nothing pending). Found by review.
    @Test func aStreamLetOutByItsOwnWindowThenResetLeavesNothingBehind() throws {
        var server = HTTP2Connection(role: .server)
        var hello = HTTP2ConnectionPreface.bytes
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.initialWindowSize, 1)], ack: false)), into: &hello)
        _ = server.receive(hello)
        _ = server.takeOutput()
        for id in stride(from: UInt32(1), through: 199, by: 2) {
            _ = server.receive(Self.headers(id, endStream: true))
            try server.sendHeaders(ConnectionPair.response, streamID: id, endStream: false)
            try server.sendData([1, 2, 3], streamID: id, endStream: false)
            _ = server.receive(Self.frame(id, .windowUpdate(increment: 10)))
            _ = server.receive(Self.frame(id, .rstStream(.cancel)))
            _ = server.takeOutput()
        }
        #expect(server.blocked.count <= server.streams.count, "\(server.blocked.count) blocked, \(server.streams.count) streams")
    }

    /// Bytes of DATA per stream in `frames`, and the streams whose DATA ended them.
    static func dataSent(_ frames: [HTTP2Frame]) -> (bytes: [UInt32: Int], ended: Set<UInt32>) {
        var bytes: [UInt32: Int] = [:]
        var ended = Set<UInt32>()
        for frame in frames {
            guard case let .data(payload, endStream, _) = frame.payload else { continue }
            bytes[frame.streamID, default: 0] += payload.count
            if endStream { ended.insert(frame.streamID) }
        }
        return (bytes, ended)
    }

    /// Connection WINDOW_UPDATEs while answers wait for their streams' own windows move
    /// nothing, and do not walk the waiting streams (found by review: each update of 1,024 or
    /// more walked all of them, outside the control budget, so a flood of 13-byte frames cost
    /// the server hundreds of times their size).
    @Test func connectionWindowUpdatesDoNotWalkStreamsTheyCannotLetOut() throws {
        var server = HTTP2Connection(role: .server)
        var hello = HTTP2ConnectionPreface.bytes
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.initialWindowSize, 0)], ack: false)), into: &hello)
        _ = server.receive(hello)
        _ = server.takeOutput()
        let ids = Array(stride(from: UInt32(1), through: 199, by: 2))
        for id in ids {
            _ = server.receive(Self.headers(id, endStream: true))
            try server.sendHeaders(ConnectionPair.response, streamID: id, endStream: false)
            try server.sendData([1, 2, 3], streamID: id, endStream: true)
        }
        #expect(server.blocked.count == ids.count)
        _ = server.takeOutput()
        let walks = server.blockedStreamWalks
        var flood: [UInt8] = []
        for _ in 0..<20_000 { flood += Self.frame(0, .windowUpdate(increment: 1024)) }
        _ = server.receive(flood)
        #expect(server.blockedStreamWalks == walks)
        #expect(Self.dataSent(try Self.answer(&server)).bytes.isEmpty)
        // Each stream's own window lets its answer out, whole.
        for id in ids { _ = server.receive(Self.frame(id, .windowUpdate(increment: 3))) }
        let sent = Self.dataSent(try Self.answer(&server))
        #expect(sent.bytes == Dictionary(uniqueKeysWithValues: ids.map { ($0, 3) }))
        #expect(sent.ended == Set(ids))
        #expect(server.blocked.isEmpty)
    }

    /// When the connection's window has run out, an update walks the waiting streams, oldest
    /// first, and lets out what both windows allow.
    @Test func aSpentConnectionWindowLetsWaitingStreamsOutWhenItOpens() throws {
        var server = HTTP2Connection(role: .server)
        // Streams' own windows larger than the connection's, which alone holds data back.
        _ = server.receive(HTTP2ConnectionPreface.bytes + Self.frame(0, .settings([HTTP2Setting(.initialWindowSize, 1_000_000)], ack: false))
            + Self.headers(1, endStream: true) + Self.headers(3, endStream: true))
        _ = server.takeOutput()
        try server.sendHeaders(ConnectionPair.response, streamID: 1, endStream: false)
        try server.sendData([UInt8](repeating: 1, count: 65_535), streamID: 1, endStream: false)
        try server.sendHeaders(ConnectionPair.response, streamID: 3, endStream: false)
        try server.sendData([UInt8](repeating: 3, count: 100), streamID: 3, endStream: true)
        try server.sendData([UInt8](repeating: 1, count: 50), streamID: 1, endStream: true)
        #expect(Self.dataSent(try Self.answer(&server)).bytes == [1: 65_535])
        #expect(server.blocked.order == [3, 1])
        let walks = server.blockedStreamWalks
        // The streams' own windows are open but the connection's is spent.
        _ = server.receive(Self.frame(0, .windowUpdate(increment: 120)))
        #expect(server.blockedStreamWalks == walks + 1)
        let sent = Self.dataSent(try Self.answer(&server))
        #expect(sent.bytes == [3: 100, 1: 20])
        #expect(sent.ended == [3])
        _ = server.receive(Self.frame(0, .windowUpdate(increment: 30)))
        let rest = Self.dataSent(try Self.answer(&server))
        #expect(rest.bytes == [1: 30])
        #expect(rest.ended == [1])
        #expect(server.blocked.isEmpty)
    }

    @Test func floodsOfControlFramesAreCalmedDown() throws {
        var settings: [UInt8] = []
        for _ in 0..<200 { settings += Self.frame(0, .settings([], ack: false)) }
        #expect(try Self.connectionError(settings) { $0.controlFrameLimit = HTTP2RateLimit(burst: 100, perSecond: 10) } == .enhanceYourCalm)
        var pings: [UInt8] = []
        for n in 0..<200 { pings += Self.frame(0, .ping(UInt64(n), ack: false)) }
        #expect(try Self.connectionError(pings) { $0.controlFrameLimit = HTTP2RateLimit(burst: 100, perSecond: 10) } == .enhanceYourCalm)
        var goAways: [UInt8] = []
        for _ in 0..<200 { goAways += Self.frame(0, .goAway(lastStreamID: 0x7FFF_FFFF, code: .noError, debugData: [])) }
        #expect(try Self.connectionError(goAways) { $0.controlFrameLimit = HTTP2RateLimit(burst: 100, perSecond: 10) } == .enhanceYourCalm)
        var empty = Self.headers(1)
        for _ in 0..<200 { empty += Self.frame(1, .data([], endStream: false, flowControlledLength: 0)) }
        #expect(try Self.connectionError(empty) { $0.controlFrameLimit = HTTP2RateLimit(burst: 100, perSecond: 10) } == .enhanceYourCalm)
        // DATA of padding alone is as empty (it passed free: only its padded length was looked
        // at). Found by review. Padded flag, pad length 0, nothing else.
        var padded = Self.headers(1)
        for _ in 0..<200 { padded += [0, 0, 1, 0, 0x8, 0, 0, 0, 1, 0] }
        #expect(try Self.connectionError(padded) { $0.controlFrameLimit = HTTP2RateLimit(burst: 100, perSecond: 10) } == .enhanceYourCalm)
        // The same frames spread over time are fine.
        var server = Self.server { $0.controlFrameLimit = HTTP2RateLimit(burst: 100, perSecond: 10) }
        let start = ContinuousClock.now
        for n in 0..<300 {
            _ = server.receive(Self.frame(0, .ping(UInt64(n), ack: false)), at: start + .milliseconds(n * 100))
        }
        #expect(!server.isClosed)
    }

    @Test func rapidResetIsCalmedDown() throws {
        var bytes: [UInt8] = []
        for n in 0..<100 {
            let stream = UInt32(n * 2 + 1)
            bytes += Self.headers(stream) + Self.frame(stream, .rstStream(.cancel))
        }
        #expect(try Self.connectionError(bytes) { $0.resetLimit = HTTP2RateLimit(burst: 50, perSecond: 5) } == .enhanceYourCalm)
        // At the default limits a normal amount of cancelling passes.
        #expect(try Self.connectionError(bytes) == nil)
    }

    @Test func resetsThePeerForcesWithErrorsAreCalmedDownToo() throws {
        // "MadeYouReset": no RST_STREAM from the peer, but a stream error (a zero
        // WINDOW_UPDATE) on each stream it opens makes this side reset it and free its slot.
        var bytes: [UInt8] = []
        for n in 0..<100 {
            let stream = UInt32(n * 2 + 1)
            bytes += Self.headers(stream, endStream: true) + Self.frame(stream, .windowUpdate(increment: 0))
        }
        #expect(try Self.connectionError(bytes) { $0.resetLimit = HTTP2RateLimit(burst: 50, perSecond: 5) } == .enhanceYourCalm)
        #expect(try Self.connectionError(bytes) == nil, "at the default limits a few such errors pass")
    }

    @Test func framesOnStreamsPastAGracefulGoAwayAreIgnoredNotFatal() throws {
        var server = Self.server()
        _ = server.receive(Self.headers(1))
        server.goAway()
        _ = server.takeOutput()
        // The client had not seen the GOAWAY: a new stream's headers, data, window update,
        // trailers and reset are all ignored (RFC 9113 §6.8), and stream 1 goes on.
        var late = Self.headers(3)
        late += Self.frame(3, .data([1, 2, 3], endStream: false, flowControlledLength: 3))
        late += Self.frame(3, .windowUpdate(increment: 10))
        late += Self.headers(3, [HPACKHeader("grpc-status", "0")], endStream: true)
        late += Self.frame(5, .rstStream(.cancel))
        let events = server.receive(late)
        #expect(events.isEmpty, "\(events)")
        #expect(!server.isClosed)
        #expect(Self.goAwayCode(try Self.answer(&server)) == nil)
        let more = server.receive(Self.frame(1, .data([9], endStream: true, flowControlledLength: 1)))
        #expect(more.contains(.data(streamID: 1, [9], endStream: true)), "\(more)")
    }

    @Test func aPeerThatWithholdsItsWindowCannotGrowAStreamsBacklog() throws {
        var configuration = HTTP2ConnectionConfiguration()
        configuration.maxPendingStreamBytes = 1000
        var server = HTTP2Connection(role: .server, configuration: configuration)
        var hello = HTTP2ConnectionPreface.bytes
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.initialWindowSize, 0)], ack: false)), into: &hello)
        _ = server.receive(hello + Self.headers(1, endStream: true) + Self.headers(3, endStream: true))
        try server.sendHeaders(ConnectionPair.response, streamID: 1, endStream: false)
        // Nothing can leave (the window is 0): the first writes queue, up to the limit.
        try server.sendData([UInt8](repeating: 1, count: 600), streamID: 1, endStream: false)
        try server.sendData([UInt8](repeating: 2, count: 300), streamID: 1, endStream: false)
        #expect(throws: HTTP2StreamError.sendBacklogFull(1, queued: 900, limit: 1000)) {
            try server.sendData([UInt8](repeating: 3, count: 200), streamID: 1, endStream: false)
        }
        // One write on its own is always taken, however large: its size is the application's.
        try server.sendHeaders(ConnectionPair.response, streamID: 3, endStream: false)
        try server.sendData([UInt8](repeating: 4, count: 5000), streamID: 3, endStream: false)
    }

    @Test(.timeLimit(.minutes(1))) func aPeerThatWithholdsItsWindowCannotGrowTheConnectionsBacklog() throws {
        func withheld() -> HTTP2Connection {
            var configuration = HTTP2ConnectionConfiguration()
            configuration.maxPendingConnectionBytes = 1000
            var server = HTTP2Connection(role: .server, configuration: configuration)
            var hello = HTTP2ConnectionPreface.bytes
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.initialWindowSize, 0)], ack: false)), into: &hello)
            _ = server.receive(hello + HTTP2HostilePeerTests.headers(1, endStream: true) + HTTP2HostilePeerTests.headers(3, endStream: true)
                + HTTP2HostilePeerTests.headers(5, endStream: true))
            _ = server.takeOutput()
            return server
        }
        #expect(HTTP2ConnectionConfiguration().maxPendingConnectionBytes == 16 << 20, "the documented default")
        var server = withheld()
        for id: UInt32 in [1, 3, 5] { try server.sendHeaders(ConnectionPair.response, streamID: id, endStream: false) }
        // Nothing can leave (every stream's window is 0): first writes on separate streams
        // queue, up to the connection's limit.
        try server.sendData([UInt8](repeating: 1, count: 600), streamID: 1, endStream: false)
        try server.sendData([UInt8](repeating: 2, count: 300), streamID: 3, endStream: false)
        #expect(server.pendingSendBytes == 900)
        #expect(throws: HTTP2StreamError.connectionSendBacklogFull(5, queued: 900, limit: 1000)) {
            try server.sendData([UInt8](repeating: 3, count: 200), streamID: 5, endStream: false)
        }
        #expect(server.pendingSendBytes == 900, "a refused write queues nothing")
        // The peer resets stream 1: its 600 bytes are given back, and the write fits.
        let events = server.receive(Self.frame(1, .rstStream(.cancel)))
        #expect(events.contains(.streamClosed(streamID: 1, .resetByPeer(.cancel))), "\(events)")
        #expect(server.pendingSendBytes == 300)
        try server.sendData([UInt8](repeating: 3, count: 200), streamID: 5, endStream: false)
        #expect(server.pendingSendBytes == 500)
        // Window for stream 3 lets its bytes out, and they leave the count.
        _ = server.receive(Self.frame(3, .windowUpdate(increment: 1000)))
        #expect(server.pendingSendBytes == 200)
        #expect(!server.isClosed)
        // One write is always taken when nothing else waits on the connection, however large.
        var fresh = withheld()
        try fresh.sendHeaders(ConnectionPair.response, streamID: 1, endStream: false)
        try fresh.sendData([UInt8](repeating: 4, count: 5000), streamID: 1, endStream: false)
        #expect(fresh.pendingSendBytes == 5000)
        // Ended, the connection holds nothing.
        _ = fresh.connectionEnded(reason: "test")
        #expect(fresh.pendingSendBytes == 0)
    }

    /// Streams reset because the peer withholds its window count against its reset budget,
    /// as resets for its stream errors do: past it the connection ends with ENHANCE_YOUR_CALM.
    @Test(.timeLimit(.minutes(1))) func resetsForAWithheldWindowAreChargedToThePeer() throws {
        var server = Self.server { $0.resetLimit = HTTP2RateLimit(burst: 2, perSecond: 1) }
        _ = server.receive(Self.headers(1, endStream: true) + Self.headers(3, endStream: true) + Self.headers(5, endStream: true))
        _ = server.takeOutput()
        let now = ContinuousClock.now
        server.resetStreamChargingPeer(1, code: .enhanceYourCalm, at: now)
        server.resetStreamChargingPeer(3, code: .enhanceYourCalm, at: now)
        #expect(!server.isClosed)
        server.resetStreamChargingPeer(5, code: .enhanceYourCalm, at: now)
        #expect(server.isClosed)
        let frames = try Self.answer(&server)
        let resets = frames.filter { if case let .rstStream(code) = $0.payload { code == .enhanceYourCalm } else { false } }
        #expect(resets.map(\.streamID) == [1, 3, 5])
        #expect(Self.goAwayCode(frames) == .enhanceYourCalm)
    }

    @Test func aSmallerTableBindsThePeerOnlyOnceItAcknowledgedIt() throws {
        // A header block that first sets the dynamic table to 4,096 octets (RFC 7541 §6.3).
        func block(_ stream: UInt32) -> [UInt8] {
            var encoder = HPACKEncoder()
            var fragment: [UInt8] = [0x3F, 0xE1, 0x1F]
            encoder.encode(ConnectionPair.request, into: &fragment)
            return Self.frame(stream, .headers(fragment: fragment[...], endStream: true, endHeaders: true))
        }
        var configuration = HTTP2ConnectionConfiguration()
        configuration.headerTableSize = 256
        var server = HTTP2Connection(role: .server, configuration: configuration)
        var hello = HTTP2ConnectionPreface.bytes
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &hello)
        // Before the client acknowledges the server's SETTINGS, 4,096 is still its to use.
        let early = server.receive(hello + block(1))
        #expect(early.failure == nil, "\(early)")
        #expect(early.contains { if case .headers(streamID: 1, _, _) = $0 { true } else { false } })
        // Acknowledged: now 256 binds it, and the same block is a compression error.
        let late = server.receive(Self.frame(0, .settings([], ack: true)) + block(3))
        #expect(late.failure?.code == .compressionError)
    }

    @Test func streamsPastTheLimitAreRefusedNotFatal() throws {
        var server = Self.server { $0.maxConcurrentStreams = 2 }
        _ = server.receive(Self.headers(1) + Self.headers(3))
        let events = server.receive(Self.headers(5))
        #expect(events.isEmpty)
        #expect(Self.resetCode(try Self.answer(&server), stream: 5) == .refusedStream)
        #expect(server.openRemoteStreamCount == 2 && !server.isClosed)
    }

    @Test func randomFramesNeverCrashOrGrowState() {
        var random = SeededGenerator(seed: 0x5EED000D)
        for _ in 0..<300 {
            var server = Self.server()
            for _ in 0..<20 {
                let type = UInt8.random(in: 0...10, using: &random)
                let length = Int.random(in: 0...40, using: &random)
                var bytes: [UInt8] = []
                HTTP2FrameEncoder.writeHeader(length: length, type: HTTP2FrameType(rawValue: type), flags: UInt8.random(in: 0...255, using: &random),
                                              streamID: UInt32.random(in: 0...9, using: &random), into: &bytes)
                bytes += (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                _ = server.receive(bytes)
                _ = server.takeOutput()
            }
            #expect(server.streams.count <= 5)
            #expect(server.frameDecoder.bufferedByteCount <= 49)
        }
    }

    /// Found by `scripts/fuzz.sh http2`: after a connection error the rest of the read stayed
    /// buffered. Now nothing is kept once the connection has failed.
    @Test func nothingStaysBufferedAfterAConnectionError() throws {
        let input = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/regressions/http2-bytes-kept-after-a-connection-error.bin")
        let bytes = [UInt8](try Data(contentsOf: input))
        var client = HTTP2Connection(role: .client)
        var hello: [UInt8] = []
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &hello)
        _ = client.receive(hello)
        _ = client.receive(bytes)
        #expect(client.isClosed)
        #expect(client.frameDecoder.bufferedByteCount == 0)
        // The same bytes in one piece at a server.
        var server = Self.server()
        _ = server.receive(bytes)
        #expect(server.frameDecoder.bufferedByteCount <= 9 + 16_384)
    }
}
