import Foundation
import PeerSupport
@testable import SwitchboardHTTP2
import Testing

/// Two sans-IO connections, a client and a server, wired back to back in memory.
struct ConnectionPair {
    var client: HTTP2Connection
    var server: HTTP2Connection
    var clientEvents: [HTTP2Event] = []
    var serverEvents: [HTTP2Event] = []

    init(client: HTTP2ConnectionConfiguration = .init(), server: HTTP2ConnectionConfiguration = .init()) {
        self.client = HTTP2Connection(role: .client, configuration: client)
        self.server = HTTP2Connection(role: .server, configuration: server)
    }

    /// A pair whose server grants each stream `window` bytes, settings already exchanged.
    static func withServerStreamWindow(_ window: Int) -> ConnectionPair {
        var small = HTTP2ConnectionConfiguration()
        small.initialStreamWindowSize = UInt32(window)
        var pair = ConnectionPair(server: small)
        pair.pump()
        return pair
    }

    /// Moves bytes both ways until neither side has anything left to say.
    mutating func pump() {
        for _ in 0..<10_000 {
            clientEvents += client.takeEvents()
            serverEvents += server.takeEvents()
            guard client.hasOutput || server.hasOutput else { return }
            serverEvents += server.receive(client.takeOutput())
            clientEvents += client.receive(server.takeOutput())
        }
        Issue.record("the connections never went quiet")
    }

    static let request = [
        HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", "/chat.Messages/SendMessage"),
        HPACKHeader(":authority", "localhost"), HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers"),
    ]
    static let response = [HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")]
    static let trailers = [HPACKHeader("grpc-status", "0")]
}

extension [HTTP2Event] {
    /// All DATA bytes for a stream, in order.
    func data(on stream: UInt32) -> [UInt8] {
        flatMap { event -> [UInt8] in
            if case let .data(id, bytes, _) = event, id == stream { return [UInt8](bytes) }
            return []
        }
    }

    func closure(of stream: UInt32) -> HTTP2StreamClosure? {
        for case let .streamClosed(id, closure) in self where id == stream { return closure }
        return nil
    }

    var failure: HTTP2ProtocolViolation? {
        for case let .connectionFailed(violation) in self { return violation }
        return nil
    }
}

/// The connection core against itself: exchanges that must work, every window honoured.
@Suite struct HTTP2ConnectionTests {
    /// The peer's header list limit holds for a list sent again (whose size the connection
    /// remembers by its storage) as for a new one, also once the peer lowers it; the size is
    /// the list's own, not a remembered neighbour's.
    @Test func aRepeatedListIsHeldToThePeersLimitEachTime() throws {
        var small = HTTP2ConnectionConfiguration()
        small.maxHeaderListSize = 400
        var pair = ConnectionPair(server: small)
        pair.pump()
        let large = ConnectionPair.request + [HPACKHeader("x-large", String(repeating: "a", count: 200))]
        let largeSize = large.reduce(0) { $0 + $1.size }
        for _ in 0..<3 {
            #expect(throws: HTTP2StreamError.headerListTooLarge(size: largeSize, limit: 400)) {
                _ = try pair.client.openStream(headers: large, endStream: true)
            }
        }
        // Same count, smaller fields: its own size, not the large list's.
        var fitting = ConnectionPair.request
        fitting.append(HPACKHeader("x-small", "a"))
        let fittingSize = fitting.reduce(0) { $0 + $1.size }
        for _ in 0..<2 { _ = try pair.client.openStream(headers: fitting, endStream: true) }
        #expect(pair.client.measuredLists.hits == 1)
        // The peer lowers its limit: the remembered list is held to the new one.
        var settings: [UInt8] = []
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.maxHeaderListSize, 300)], ack: false)), into: &settings)
        _ = pair.client.receive(settings)
        #expect(throws: HTTP2StreamError.headerListTooLarge(size: fittingSize, limit: 300)) {
            _ = try pair.client.openStream(headers: fitting, endStream: true)
        }
    }

    @Test func settingsAreExchangedAndAcknowledged() throws {
        var fresh = HTTP2Connection(role: .client)
        #expect(Array(fresh.takeOutput().prefix(24)) == HTTP2ConnectionPreface.bytes)
        var seven = HTTP2ConnectionConfiguration()
        seven.maxConcurrentStreams = 7
        var pair = ConnectionPair(server: seven)
        pair.pump()
        #expect(pair.client.isEstablished && pair.server.isEstablished)
        #expect(pair.client.remoteSettings.maxConcurrentStreams == 7)
        #expect(pair.client.remoteSettings.enablePush == false)
        #expect(pair.server.remoteSettings.initialWindowSize == 1 << 20)
        #expect(pair.client.pendingLocalSettingsAcks == 0 && pair.server.pendingLocalSettingsAcks == 0)
        #expect(pair.clientEvents.failure == nil && pair.serverEvents.failure == nil)
    }

    @Test func aRequestAndItsResponseWithTrailers() throws {
        var pair = ConnectionPair()
        pair.pump()
        let id = try pair.client.openStream(headers: ConnectionPair.request)
        try pair.client.sendData([0, 0, 0, 0, 2, 8, 1], streamID: id, endStream: true)
        pair.pump()
        #expect(pair.serverEvents.contains(.headers(streamID: id, ConnectionPair.request, endStream: false)))
        #expect(pair.serverEvents.data(on: id) == [0, 0, 0, 0, 2, 8, 1])
        try pair.server.sendHeaders(ConnectionPair.response, streamID: id, endStream: false)
        try pair.server.sendData([0, 0, 0, 0, 0], streamID: id, endStream: false)
        try pair.server.sendHeaders(ConnectionPair.trailers, streamID: id, endStream: true)
        pair.pump()
        #expect(pair.clientEvents.contains(.headers(streamID: id, ConnectionPair.response, endStream: false)))
        #expect(pair.clientEvents.data(on: id) == [0, 0, 0, 0, 0])
        #expect(pair.clientEvents.contains(.headers(streamID: id, ConnectionPair.trailers, endStream: true)))
        #expect(pair.clientEvents.closure(of: id) == .completed)
        #expect(pair.serverEvents.closure(of: id) == .completed)
        #expect(pair.client.openLocalStreamCount == 0 && pair.server.openRemoteStreamCount == 0)
    }

    @Test func dataWaitsForTheStreamWindowAndArrivesWhole() throws {
        var pair = ConnectionPair.withServerStreamWindow(1000)
        let id = try pair.client.openStream(headers: ConnectionPair.request)
        let message = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        try pair.client.sendData(message, streamID: id, endStream: true)
        // Only the window goes out before the server has read anything.
        let first = try HTTP2FrameTests.frames(in: pair.client.takeOutput())
        let sent = first.reduce(0) { total, frame in
            if case let .data(bytes, _, _) = frame.payload { return total + bytes.count }
            return total
        }
        #expect(sent == 1000)
        pair.serverEvents += pair.server.receive(HTTP2FrameTests.encode(first))
        pair.pump()
        #expect(pair.serverEvents.data(on: id) == message)
    }

    @Test func dataWaitsForTheConnectionWindowAcrossStreams() throws {
        var tight = HTTP2ConnectionConfiguration()
        tight.connectionWindowSize = 65_535
        tight.initialStreamWindowSize = 1 << 20
        var pair = ConnectionPair(server: tight)
        pair.pump()
        let messages = (0..<3).map { n in [UInt8](repeating: UInt8(n), count: 50_000) }
        var ids: [UInt32] = []
        for message in messages {
            let id = try pair.client.openStream(headers: ConnectionPair.request)
            try pair.client.sendData(message, streamID: id, endStream: true)
            ids.append(id)
        }
        pair.pump()
        for (id, message) in zip(ids, messages) {
            #expect(pair.serverEvents.data(on: id) == message)
        }
        #expect(pair.serverEvents.failure == nil)
    }

    @Test func trailersQueuedBehindDataKeepHPACKInWireOrder() throws {
        var small = HTTP2ConnectionConfiguration()
        small.initialStreamWindowSize = 100
        var pair = ConnectionPair(client: small)
        pair.pump()
        let first = try pair.client.openStream(headers: ConnectionPair.request)
        try pair.client.sendData([], streamID: first, endStream: true)
        pair.pump()
        try pair.server.sendHeaders(ConnectionPair.response, streamID: first, endStream: false)
        try pair.server.sendData([UInt8](repeating: 1, count: 1000), streamID: first, endStream: false)
        // Trailers wait behind the data; headers for another stream are encoded meanwhile.
        try pair.server.sendHeaders([HPACKHeader("grpc-status", "5"), HPACKHeader("grpc-message", "not here")], streamID: first, endStream: true)
        let second = try pair.client.openStream(headers: ConnectionPair.request)
        try pair.client.sendData([], streamID: second, endStream: true)
        pair.pump()
        try pair.server.sendHeaders(ConnectionPair.response + [HPACKHeader("x-new", "value")], streamID: second, endStream: false)
        try pair.server.sendHeaders([HPACKHeader("grpc-status", "0"), HPACKHeader("x-more", "m")], streamID: second, endStream: true)
        pair.pump()
        #expect(pair.clientEvents.failure == nil)
        #expect(pair.clientEvents.data(on: first).count == 1000)
        #expect(pair.clientEvents.contains(.headers(streamID: first, [HPACKHeader("grpc-status", "5"), HPACKHeader("grpc-message", "not here")], endStream: true)))
        #expect(pair.clientEvents.contains(.headers(streamID: second, [HPACKHeader("grpc-status", "0"), HPACKHeader("x-more", "m")], endStream: true)))
    }

    /// Bytes a stream cannot send yet wait beside the stream table: random writes over small
    /// windows (some ending the stream, some with trailers) arrive whole and in order, each
    /// stream ends once, and nothing is left waiting after streams end or are reset.
    @Test func randomWritesOverSmallWindowsArriveWholeAndLeaveNothingBehind() throws {
        for round in 0..<30 {
            var generator = SeededGenerator(seed: UInt64(round) + 1)
            var small = HTTP2ConnectionConfiguration()
            small.initialStreamWindowSize = UInt32.random(in: 1...3000, using: &generator)
            small.connectionWindowSize = UInt32.random(in: 65_535...100_000, using: &generator)
            var pair = ConnectionPair(server: small)
            pair.pump()
            var expected: [UInt32: [UInt8]] = [:]
            var reset: UInt32?
            for n in 0..<4 {
                let id = try pair.client.openStream(headers: ConnectionPair.request)
                var sent: [UInt8] = []
                let writes = Int.random(in: 0...4, using: &generator)
                for write in 0..<writes {
                    let chunk = (0..<Int.random(in: 0...5000, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
                    sent += chunk
                    try pair.client.sendData(chunk, streamID: id, endStream: write == writes - 1 && n % 2 == 0)
                }
                if writes == 0 || n % 2 == 1 {
                    // Ended by trailers (queued behind data still waiting) or by an empty DATA.
                    if Bool.random(using: &generator) {
                        try pair.client.sendHeaders([HPACKHeader("x-end", "\(n)")], streamID: id, endStream: true)
                    } else {
                        try pair.client.sendData([], streamID: id, endStream: true)
                    }
                }
                expected[id] = sent
                if n == 3, round % 3 == 0, !sent.isEmpty {
                    pair.client.resetStream(id, code: .cancel)
                    reset = id
                }
            }
            pair.pump()
            #expect(pair.serverEvents.failure == nil && pair.clientEvents.failure == nil)
            for (id, bytes) in expected where id != reset {
                #expect(pair.serverEvents.data(on: id) == bytes, "round \(round), stream \(id)")
                let ends = pair.serverEvents.filter { event in
                    switch event {
                    case let .data(stream, _, endStream), let .headers(stream, _, endStream): stream == id && endStream
                    default: false
                    }
                }
                #expect(ends.count == 1, "stream \(id) ends exactly once")
            }
            #expect(pair.client.pendingOutput.isEmpty, "no output is kept for streams that ended or were reset")
            #expect(pair.client.pendingSendBytes == 0, "round \(round): every byte counted as waiting went out or was dropped")
            // A stream the peer resets while its data waits for window leaves nothing either.
            let late = try pair.client.openStream(headers: ConnectionPair.request)
            try pair.client.sendData([UInt8](repeating: 7, count: 20_000), streamID: late, endStream: false)
            // The server learns of the stream and resets it before any window comes back.
            pair.serverEvents += pair.server.receive(pair.client.takeOutput())
            #expect(!pair.client.pendingOutput.isEmpty, "a stream window of at most 3,000 bytes holds the rest back")
            pair.server.resetStream(late, code: .cancel)
            pair.clientEvents += pair.client.receive(pair.server.takeOutput())
            pair.pump()
            #expect(pair.clientEvents.closure(of: late) != nil)
            #expect(pair.client.pendingOutput.isEmpty, "round \(round): a stream the peer reset keeps no output")
            #expect(pair.client.pendingSendBytes == 0 && pair.server.pendingSendBytes == 0, "round \(round): nothing is counted as waiting")
        }
    }

    /// A stream a GOAWAY leaves unprocessed, its data still waiting for window, keeps no output.
    @Test func aStreamAGoAwayExcludesKeepsNoOutput() throws {
        var pair = ConnectionPair.withServerStreamWindow(100)
        let id = try pair.client.openStream(headers: ConnectionPair.request)
        try pair.client.sendData([UInt8](repeating: 1, count: 5000), streamID: id, endStream: true)
        #expect(!pair.client.pendingOutput.isEmpty)
        // The server goes away before it reads the stream, so the GOAWAY excludes it.
        pair.server.goAway()
        pair.clientEvents += pair.client.receive(pair.server.takeOutput())
        #expect(pair.clientEvents.closure(of: id) == .notProcessed)
        #expect(pair.client.pendingOutput.isEmpty)
    }

    @Test func callsBeyondThePeersStreamLimitWait() throws {
        var two = HTTP2ConnectionConfiguration()
        two.maxConcurrentStreams = 2
        var pair = ConnectionPair(server: two)
        pair.pump()
        let a = try pair.client.openStream(headers: ConnectionPair.request)
        _ = try pair.client.openStream(headers: ConnectionPair.request)
        #expect(!pair.client.canOpenStream)
        #expect(throws: HTTP2StreamError.concurrencyLimitReached) { try pair.client.openStream(headers: ConnectionPair.request) }
        try pair.client.sendData([], streamID: a, endStream: true)
        pair.pump()
        try pair.server.sendHeaders(ConnectionPair.response + ConnectionPair.trailers, streamID: a, endStream: true)
        pair.pump()
        #expect(pair.clientEvents.closure(of: a) == .completed)
        #expect(pair.client.canOpenStream)
        #expect(try pair.client.openStream(headers: ConnectionPair.request) == 5)
    }

    @Test func pingsAreAnswered() {
        var pair = ConnectionPair()
        pair.pump()
        pair.client.ping(0xfeed)
        pair.pump()
        #expect(pair.clientEvents.contains(.pingAcknowledged(0xfeed)))
    }

    @Test func goAwayFailsOnlyUnprocessedStreamsAsRetryable() throws {
        var pair = ConnectionPair()
        pair.pump()
        let processed = try pair.client.openStream(headers: ConnectionPair.request)
        pair.pump()
        let late = try pair.client.openStream(headers: ConnectionPair.request)
        // The server says goodbye before it reads the second stream.
        pair.server.goAway()
        pair.clientEvents += pair.client.receive(pair.server.takeOutput())
        #expect(pair.clientEvents.contains(.goAway(lastStreamID: processed, .noError, debugData: [])))
        #expect(pair.clientEvents.closure(of: late) == .notProcessed)
        #expect(pair.clientEvents.closure(of: late)?.isSafeToRetry == true)
        #expect(throws: HTTP2StreamError.goingAway) { try pair.client.openStream(headers: ConnectionPair.request) }
        // The first stream still finishes; then the connection is quiescent.
        pair.pump()
        #expect(pair.serverEvents.closure(of: late) == nil, "the server ignores streams past its GOAWAY")
        try pair.client.sendData([], streamID: processed, endStream: true)
        pair.pump()
        try pair.server.sendHeaders(ConnectionPair.response + ConnectionPair.trailers, streamID: processed, endStream: true)
        pair.pump()
        #expect(pair.clientEvents.closure(of: processed) == .completed)
        #expect(pair.client.isQuiescent && pair.server.isQuiescent)
    }

    /// A stream the client opens while the server's shutdown is on its way is served: the
    /// first GOAWAY names no stream, and the last one comes a PING's round trip later.
    @Test func aGracefulShutdownServesAStreamOpenedBeforeThePeerSawIt() throws {
        var pair = ConnectionPair()
        pair.pump()
        let early = try pair.client.openStream(headers: ConnectionPair.request)
        pair.pump()
        pair.server.beginGracefulShutdown()
        let late = try pair.client.openStream(headers: ConnectionPair.request)
        #expect(!pair.server.isQuiescent)
        pair.pump()
        #expect(pair.clientEvents.contains(.goAway(lastStreamID: 0x7fff_ffff, .noError, debugData: [])))
        #expect(pair.clientEvents.contains(.goAway(lastStreamID: late, .noError, debugData: [])))
        #expect(pair.clientEvents.closure(of: late) == nil, "not refused")
        #expect(pair.serverEvents.contains { if case let .headers(id, _, _) = $0 { id == late } else { false } })
        #expect(!pair.clientEvents.contains { if case .pingAcknowledged = $0 { true } else { false } })
        #expect(!pair.serverEvents.contains { if case .pingAcknowledged = $0 { true } else { false } }, "the shutdown's PING is the core's own")
        #expect(throws: HTTP2StreamError.goingAway) { try pair.client.openStream(headers: ConnectionPair.request) }
        for id in [early, late] {
            try pair.client.sendData([], streamID: id, endStream: true)
            try pair.server.sendHeaders(ConnectionPair.response + ConnectionPair.trailers, streamID: id, endStream: true)
        }
        pair.pump()
        #expect(pair.clientEvents.closure(of: early) == .completed)
        #expect(pair.clientEvents.closure(of: late) == .completed)
        #expect(pair.client.isQuiescent && pair.server.isQuiescent)
    }

    /// A client has no peer-opened streams to wait for: its shutdown is one GOAWAY.
    @Test func aClientsGracefulShutdownIsOneGoAway() {
        var pair = ConnectionPair()
        pair.pump()
        pair.client.beginGracefulShutdown()
        #expect(pair.client.isQuiescent)
        pair.pump()
        #expect(pair.serverEvents.contains(.goAway(lastStreamID: 0, .noError, debugData: [])))
    }

    @Test func aCancelledStreamsLateFramesAreDroppedQuietly() throws {
        var pair = ConnectionPair()
        pair.pump()
        let id = try pair.client.openStream(headers: ConnectionPair.request)
        pair.pump()
        try pair.server.sendHeaders(ConnectionPair.response, streamID: id, endStream: false)
        try pair.server.sendData([1, 2, 3], streamID: id, endStream: false)
        // The client cancels while that response is in flight.
        pair.client.resetStream(id, code: .cancel)
        pair.pump()
        #expect(pair.serverEvents.closure(of: id) == .resetByPeer(.cancel))
        #expect(pair.clientEvents.failure == nil)
        #expect(!pair.clientEvents.contains(.data(streamID: id, [1, 2, 3], endStream: false)))
    }

    @Test func aLargeHeaderListSpansContinuationFrames() throws {
        var pair = ConnectionPair()
        pair.pump()
        let big = ConnectionPair.request + (0..<6).map { HPACKHeader("x-big-\($0)", String(repeating: "v", count: 2000), indexing: .never) }
        let id = try pair.client.openStream(headers: big)
        pair.pump()
        #expect(pair.serverEvents.contains(.headers(streamID: id, big, endStream: false)))
        // Past the server's MAX_HEADER_LIST_SIZE the client refuses to send it.
        let huge = ConnectionPair.request + [HPACKHeader("x-huge", String(repeating: "v", count: 20_000))]
        #expect(throws: HTTP2StreamError.self) { try pair.client.openStream(headers: huge) }
    }
}

extension HTTP2FrameTests {
    static func encode(_ frames: [HTTP2Frame]) -> [UInt8] {
        var bytes: [UInt8] = []
        for frame in frames { HTTP2FrameEncoder.write(frame, into: &bytes) }
        return bytes
    }
}
