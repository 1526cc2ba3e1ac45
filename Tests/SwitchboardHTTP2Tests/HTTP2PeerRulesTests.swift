import Foundation
@testable import SwitchboardHTTP2
import Testing

/// RFC 9113 and RFC 7541 rules strict peers hold this side to (from the conformance review).
@Suite struct HTTP2PeerRulesTests {
    typealias Peer = HTTP2HostilePeerTests

    /// A literal with incremental indexing and a new name: `0x40`, name, value, as raw octets.
    static func indexedLiteral(name: [UInt8], value: [UInt8]) -> [UInt8] {
        [0x40, UInt8(name.count)] + name + [UInt8(value.count)] + value
    }

    /// Text that is not UTF-8 is held repaired (longer), but the table counts the octets the
    /// peer sent, so both sides evict the same entries and later indexes still agree.
    @Test func theTableCountsTheOctetsThePeerSent() throws {
        var decoder = HPACKDecoder(maximumTableSize: 4096)
        let latin1 = [UInt8](repeating: 0xE9, count: 100) // "é" in Latin-1: not UTF-8
        let block = Self.indexedLiteral(name: Array("x-name".utf8), value: latin1)
        let decoded = try decoder.decode(block)
        #expect(decoded.hasInvalidText)
        #expect(decoder.tableSize == 6 + 100 + 32, "the repaired text is 300 bytes; the peer counts 138")
        // 29 such entries fit the peer's 4,096 bytes by its count (4,002); counted by the
        // repaired text (338 each) only 12 would, and the peer's index 90 would be gone here.
        for _ in 0..<28 { _ = try decoder.decode(block) }
        #expect(decoder.tableSize == 29 * 138)
        let oldest = try decoder.decode([0x80 | 90]) // 61 static entries, then the 29th newest
        #expect(oldest.headers.first?.name == "x-name")
    }

    /// A GOAWAY after a graceful one names the same last stream: the id never goes up.
    @Test func aSecondGoAwayNeverRaisesTheLastStream() throws {
        var server = Peer.server()
        _ = server.receive(Peer.headers(1))
        server.goAway()
        var frames = try Peer.answer(&server)
        guard case let .goAway(first, _, _)? = frames.last?.payload else {
            Issue.record("a GOAWAY first")
            return
        }
        #expect(first == 1)
        // The client opens stream 3 before it reads the GOAWAY, then breaks a rule.
        _ = server.receive(Peer.headers(3))
        _ = server.receive(Peer.frame(0, .windowUpdate(increment: 0)))
        frames = try Peer.answer(&server)
        let lasts = frames.compactMap { frame -> UInt32? in
            if case let .goAway(last, _, _) = frame.payload { return last }
            return nil
        }
        #expect(lasts == [1], "\(frames)")
    }

    /// Until the shutdown's PING is answered the server keeps the connection and accepts
    /// streams; the answer brings the GOAWAY naming the last stream, and streams past it are
    /// ignored from then on. Another PING's answer does not end the wait.
    @Test func aGracefulShutdownWaitsForItsPingsAnswer() throws {
        var server = Peer.server()
        server.beginGracefulShutdown()
        var frames = try Peer.answer(&server)
        guard frames.count == 2, case let .goAway(first, .noError, _) = frames[0].payload, case let .ping(opaque, false) = frames[1].payload else {
            Issue.record("a GOAWAY and a PING, not \(frames)")
            return
        }
        #expect(first == 0x7fff_ffff)
        #expect(!server.isQuiescent, "streams may still be on their way")
        let opened = server.receive(Peer.headers(1, endStream: true))
        #expect(opened.contains { if case .headers(1, _, true) = $0 { true } else { false } }, "\(opened)")
        let other = server.receive(Peer.frame(0, .ping(opaque &+ 1, ack: true)))
        #expect(other == [.pingAcknowledged(opaque &+ 1)])
        #expect(try Peer.answer(&server).isEmpty)
        #expect(server.receive(Peer.frame(0, .ping(opaque, ack: true))).isEmpty)
        frames = try Peer.answer(&server)
        guard frames.count == 1, case let .goAway(last, .noError, _) = frames[0].payload else {
            Issue.record("the last GOAWAY, not \(frames)")
            return
        }
        #expect(last == 1)
        #expect(server.receive(Peer.headers(3)).isEmpty, "past the last GOAWAY")
        try server.sendHeaders(ConnectionPair.response + ConnectionPair.trailers, streamID: 1, endStream: true)
        #expect(server.isQuiescent)
    }

    /// A peer that goes away while the shutdown's PING is unanswered has sent every stream it
    /// opened before its GOAWAY: the last GOAWAY goes at once, naming the last stream, and the
    /// connection ends when that stream does, without waiting for an answer that a closing
    /// peer never sends.
    @Test func aPeersGoAwayEndsAGracefulShutdownsWait() throws {
        var server = Peer.server()
        server.beginGracefulShutdown()
        _ = try Peer.answer(&server)
        _ = server.receive(Peer.headers(1, endStream: true))
        #expect(!server.isQuiescent)
        let events = server.receive(Peer.frame(0, .goAway(lastStreamID: 0, code: .noError, debugData: [])))
        #expect(events.contains { if case .goAway(0, .noError, _) = $0 { true } else { false } }, "\(events)")
        let frames = try Peer.answer(&server)
        guard frames.count == 1, case let .goAway(last, .noError, _) = frames[0].payload else {
            Issue.record("the last GOAWAY, not \(frames)")
            return
        }
        #expect(last == 1)
        #expect(!server.isQuiescent, "stream 1 still runs")
        try server.sendHeaders(ConnectionPair.response + ConnectionPair.trailers, streamID: 1, endStream: true)
        #expect(server.isQuiescent)
        _ = try Peer.answer(&server)
        // The PING's late answer is only an answer now: no second GOAWAY.
        let late = server.receive(Peer.frame(0, .ping(HTTP2Connection.drainingPingOpaque, ack: true)))
        #expect(late.contains(.pingAcknowledged(HTTP2Connection.drainingPingOpaque)), "\(late)")
        #expect(try Peer.answer(&server).isEmpty)
    }

    /// A peer that went away before the shutdown began gets the last GOAWAY at once, with no
    /// PING to wait for.
    @Test func aShutdownAfterThePeersGoAwaySendsTheLastGoAwayAtOnce() throws {
        var server = Peer.server()
        _ = server.receive(Peer.headers(1, endStream: true))
        _ = server.receive(Peer.frame(0, .goAway(lastStreamID: 0, code: .noError, debugData: [])))
        _ = try Peer.answer(&server)
        server.beginGracefulShutdown()
        let frames = try Peer.answer(&server)
        guard frames.count == 1, case let .goAway(last, .noError, _) = frames[0].payload else {
            Issue.record("one GOAWAY and no PING, not \(frames)")
            return
        }
        #expect(last == 1)
        try server.sendHeaders(ConnectionPair.response + ConnectionPair.trailers, streamID: 1, endStream: true)
        #expect(server.isQuiescent)
    }

    /// A connection error while a graceful shutdown waits names the last stream really
    /// opened, not the first GOAWAY's placeholder.
    @Test func anErrorDuringAGracefulShutdownNamesTheLastStreamOpened() throws {
        var server = Peer.server()
        _ = server.receive(Peer.headers(1))
        server.beginGracefulShutdown()
        _ = try Peer.answer(&server)
        _ = server.receive(Peer.headers(3))
        _ = server.receive(Peer.frame(0, .windowUpdate(increment: 0)))
        let lasts = try Peer.answer(&server).compactMap { frame -> UInt32? in
            if case let .goAway(last, _, _) = frame.payload { return last }
            return nil
        }
        #expect(lasts == [3])
    }

    @Test func aClientRefusesAServerThatEnablesPush() throws {
        var client = HTTP2Connection(role: .client)
        _ = client.takeOutput()
        let events = client.receive(Peer.frame(0, .settings([HTTP2Setting(.enablePush, 1)], ack: false)))
        #expect(events.failure?.code == .protocolError)
    }

    /// More resets than the memory of reset streams holds (a deadline storm): the peer's late
    /// frames for the forgotten ones are still dropped, not a connection error.
    @Test func lateFramesForStreamsResetLongAgoAreDropped() throws {
        var server = Peer.server { $0.recentlyResetStreamMemory = 2 }
        for stream: UInt32 in [1, 3, 5] {
            _ = server.receive(Peer.headers(stream))
            server.resetStream(stream, code: .cancel)
        }
        _ = server.takeOutput()
        let events = server.receive(Peer.frame(1, .data([1, 2], endStream: false, flowControlledLength: 2)))
        #expect(events.failure == nil, "\(events)")
        #expect(!server.isClosed)
    }

    /// The forgotten resets' watermark is kept per parity: a client's frames on an even
    /// (server-initiated) id below it are still the PROTOCOL_ERROR RFC 9113 §5.1.1 requires,
    /// not dropped as if that stream had been reset here.
    @Test func aForgottenResetDoesNotHideFramesOnTheOtherParity() throws {
        var server = Peer.server { $0.recentlyResetStreamMemory = 2 }
        for stream: UInt32 in [1, 3, 5, 7, 9] {
            _ = server.receive(Peer.headers(stream))
            server.resetStream(stream, code: .cancel)
        }
        _ = server.takeOutput()
        var ids = RecentStreamIDs(capacity: 2)
        for id: UInt32 in [1, 3, 5, 7, 9] { ids.insert(id) }
        #expect(ids.contains(5) && !ids.contains(4) && !ids.contains(2) && !ids.contains(11))
        let events = server.receive(Peer.headers(4))
        #expect(events.failure != nil, "HEADERS on an even id a client may not open was dropped: \(events)")
    }

    /// The reset rate limit guards a server against streams the peer opens and resets; a
    /// server resetting the client's own streams frees slots the client filled.
    @Test func aClientIsNotCalmedForTheServersResetsOfItsOwnStreams() throws {
        var configuration = HTTP2ConnectionConfiguration()
        configuration.resetLimit = HTTP2RateLimit(burst: 2, perSecond: 0)
        var pair = ConnectionPair(client: configuration)
        pair.pump()
        for _ in 0..<10 {
            let id = try pair.client.openStream(headers: ConnectionPair.request)
            pair.pump()
            pair.server.resetStream(id, code: .refusedStream)
            pair.pump()
        }
        #expect(pair.clientEvents.failure == nil)
        #expect(!pair.client.isClosed)
    }

    /// A PING after this side has sent something is free of the control-frame budget, as
    /// gRPC servers count bandwidth-probing pings; PINGs with nothing sent between are not.
    @Test func pingsThatFollowDataAreFree() throws {
        var configuration = HTTP2ConnectionConfiguration()
        configuration.controlFrameLimit = HTTP2RateLimit(burst: 3, perSecond: 0)
        var pair = ConnectionPair(server: configuration)
        pair.pump()
        let id = try pair.client.openStream(headers: ConnectionPair.request)
        pair.pump()
        try pair.server.sendHeaders(ConnectionPair.response, streamID: id, endStream: false)
        for n in 0..<20 {
            try pair.server.sendData([UInt8(n)], streamID: id, endStream: false)
            pair.pump()
            pair.client.ping(UInt64(n))
            pair.pump()
        }
        #expect(pair.serverEvents.failure == nil)
        for n in 0..<5 { pair.client.ping(UInt64(100 + n)) }
        pair.pump()
        #expect(pair.serverEvents.failure?.code == .enhanceYourCalm, "back-to-back PINGs with nothing sent still count")
    }

    @Test func pseudoHeaderValuesAreCheckedAndEdgeSpacesTolerated() throws {
        var crlf = ConnectionPair.request
        crlf[2] = HPACKHeader(":path", "/a\r\nb")
        var server = Peer.server()
        _ = server.receive(Peer.headers(1, crlf))
        #expect(Peer.resetCode(try Peer.answer(&server), stream: 1) == .protocolError)
        // A value ending in a space (gRPC servers in Go and Java send grpc-message so) passes.
        var client = HTTP2ConnectionPair()
        let events = try client.exchange(response: [HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")],
                                         trailers: [HPACKHeader("grpc-status", "2"), HPACKHeader("grpc-message", "failed: ")])
        #expect(events.contains { if case let .headers(_, list, true) = $0 { list.contains(HPACKHeader("grpc-message", "failed: ")) } else { false } })
    }

    /// RFC 9113 §8.5 and §8.6 (from the parser review): a CONNECT request names :authority
    /// and no :scheme or :path; a response's :status is never 101.
    @Test func connectRequestsAndSwitchingProtocolsAreMalformed() throws {
        for (label, headers) in [
            ("CONNECT without :authority", [HPACKHeader(":method", "CONNECT")]),
            ("CONNECT with :path", [HPACKHeader(":method", "CONNECT"), HPACKHeader(":authority", "a:443"), HPACKHeader(":path", "/")]),
            ("CONNECT with :scheme", [HPACKHeader(":method", "CONNECT"), HPACKHeader(":authority", "a:443"), HPACKHeader(":scheme", "https")]),
        ] {
            #expect(throws: HTTP2ProtocolViolation.self, "\(label)") { try HTTP2HeaderValidation.validate(headers, as: .request) }
        }
        #expect(throws: Never.self) {
            try HTTP2HeaderValidation.validate([HPACKHeader(":method", "CONNECT"), HPACKHeader(":authority", "a:443")], as: .request)
        }
        #expect(throws: HTTP2ProtocolViolation.self) { try HTTP2HeaderValidation.validate([HPACKHeader(":status", "101")], as: .response) }
        #expect(try HTTP2HeaderValidation.validate([HPACKHeader(":status", "103")], as: .response).isInformational)
    }

    /// Fields that refer to a table entry whose characters were checked when it was made are
    /// not checked again; an entry that failed the checks fails every list that refers to it.
    @Test func fieldsFromCheckedEntriesSkipTheCharacterChecksButBadEntriesNever() throws {
        for bad in [HPACKHeader("x-bad", " padded"), HPACKHeader("X-Upper", "v"), HPACKHeader("x-nul", "a\u{0}b")] {
            var server = Peer.server()
            // One encoder for both lists, indexing everything: the second list refers to the
            // entries the first added, the bad one included.
            var encoder = HPACKEncoder(indexesEverything: true)
            let list = ConnectionPair.request + [bad]
            for stream: UInt32 in [1, 3] {
                var block: [UInt8] = []
                encoder.encode(list, into: &block)
                if stream == 3 { #expect(block.allSatisfy { $0 & 0x80 != 0 }, "all indexed the second time") }
                _ = server.receive(HTTP2FrameTests.encode([HTTP2Frame(streamID: stream, payload: .headers(fragment: block[...], endStream: true, endHeaders: true))]))
                #expect(Peer.resetCode(try Peer.answer(&server), stream: stream) == .protocolError, "\(bad.name) on stream \(stream)")
            }
        }
        // The decoder marks what came from checked entries: static ones, and dynamic ones that
        // passed when added; never a literal, nor an entry that failed.
        var encoder = HPACKEncoder(indexesEverything: true)
        var decoder = HPACKDecoder()
        let list = [HPACKHeader(":method", "POST"), HPACKHeader("x-good", "1"), HPACKHeader("x-bad", "1 ")]
        for round in 0..<2 {
            var block: [UInt8] = []
            encoder.encode(list, into: &block)
            let decoded = try decoder.decode(block)
            #expect(decoded.checkedFields == (round == 0 ? 0b001 : 0b011), "round \(round)")
        }
        // Text that was not UTF-8 is held repaired: every later reference to its entry, whole
        // or by name, is flagged as the first was, and never counts as checked.
        var utf8Decoder = HPACKDecoder()
        let added = try utf8Decoder.decode(Self.indexedLiteral(name: Array("x-name".utf8), value: [0xE9, 0x41]))
        #expect(added.hasInvalidText)
        let referenced = try utf8Decoder.decode([0x80 | 62])
        #expect(referenced.hasInvalidText && referenced.checkedFields == 0)
        let badName = try utf8Decoder.decode(Self.indexedLiteral(name: [0x78, 0xFF], value: Array("v".utf8)))
        #expect(badName.hasInvalidText)
        let byName = try utf8Decoder.decode([0x40 | 62, 1, UInt8(ascii: "w")])
        #expect(byName.hasInvalidText, "a literal that takes its name from an entry whose name was repaired")
        let cleanAgain = try utf8Decoder.decode(Self.indexedLiteral(name: Array("x-ok".utf8), value: Array("1".utf8)) + [0x80 | 62])
        #expect(!cleanAgain.hasInvalidText && cleanAgain.checkedFields == 0b10)
        // A name that begins with a colon but is no pseudo-header is not clean.
        #expect(!HTTP2HeaderValidation.charactersAreClean(name: ":x\u{0}", value: "v"))
        #expect(HTTP2HeaderValidation.charactersAreClean(name: ":authority", value: "example.com"))
        for (name, value) in HPACKStaticTable.entries {
            #expect(HTTP2HeaderValidation.charactersAreClean(name: name, value: value), "static \(name): \(value)")
        }
        #expect(!HTTP2HeaderValidation.charactersAreClean(name: "", value: "v"))
        #expect(!HTTP2HeaderValidation.charactersAreClean(name: "a b", value: "v"))
        #expect(!HTTP2HeaderValidation.charactersAreClean(name: "a", value: "v\t"))
        #expect(!HTTP2HeaderValidation.charactersAreClean(name: ":path", value: "/a\rb"))
        #expect(HTTP2HeaderValidation.charactersAreClean(name: "x-a", value: "in side"))
    }

    /// What a received list must be (RFC 9113 §8.3), checked the way the fast paths take it:
    /// the static table's `200` and any other spelling of a status, CONNECT against other
    /// methods, names of the connection-specific lengths.
    @Test func receivedListsAreCheckedWhateverStringsHoldThem() throws {
        func accepts(_ headers: [HPACKHeader], as kind: HTTP2HeaderValidation.Kind) -> Bool {
            (try? HTTP2HeaderValidation.validate(headers, as: kind)) != nil
        }
        // A status decoded from bytes reads as the literal does.
        let built = String(decoding: Array("200".utf8), as: UTF8.self)
        for (status, valid) in [("200", true), (built, true), ("204", true), ("103", true), ("999", true), ("099", false), ("+20", false),
                                ("1000", false), ("20", false), ("abc", false), ("", false), ("2 0", false)] {
            #expect(accepts([HPACKHeader(":status", status)], as: .response) == valid, "\(status)")
        }
        #expect(try HTTP2HeaderValidation.validate([HPACKHeader(":status", "103")], as: .response).isInformational)
        #expect(try !HTTP2HeaderValidation.validate([HPACKHeader(":status", built)], as: .response).isInformational)
        let get = [HPACKHeader(":method", "GET"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", "/")]
        #expect(accepts(get, as: .request))
        #expect(!accepts([HPACKHeader(":method", "GET"), HPACKHeader(":path", "/")], as: .request), "no :scheme")
        #expect(!accepts([HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http")], as: .request), "no :path")
        #expect(accepts([HPACKHeader(":method", "CONNECT"), HPACKHeader(":authority", "example.com:443")], as: .request))
        #expect(!accepts([HPACKHeader(":method", "CONNECX"), HPACKHeader(":authority", "example.com:443")], as: .request))
        for name in ["connection", "keep-alive", "upgrade", "proxy-connection", "transfer-encoding"] {
            #expect(!accepts(get + [HPACKHeader(name, "x")], as: .request), "\(name)")
        }
        for name in ["user-agent", "connectio", "keep-alivf", "cookie-set"] {
            #expect(accepts(get + [HPACKHeader(name, "x")], as: .request), "\(name)")
        }
        #expect(!accepts(get + [HPACKHeader("te", "gzip")], as: .request))
        #expect(accepts(get + [HPACKHeader("te", "trailers")], as: .request))
        #expect(!accepts(get + [HPACKHeader("User-Agent", "x")], as: .request), "uppercase")
    }

    @Test func configurationOutsideTheRFCIsBroughtWithinIt() {
        var configuration = HTTP2ConnectionConfiguration()
        configuration.initialStreamWindowSize = 0
        configuration.maxFrameSize = 100
        let connection = HTTP2Connection(role: .server, configuration: configuration)
        #expect(connection.configuration.initialStreamWindowSize == 1)
        #expect(connection.configuration.maxFrameSize == HTTP2FrameLimits.minimumMaxFrameSize)
        // A table cap past what SETTINGS can carry trapped when the peer's SETTINGS came.
        // Found by review.
        for (cap, kept) in [(Int.max, Int(UInt32.max)), (-1, 0)] {
            var wide = HTTP2ConnectionConfiguration()
            wide.encoderTableSizeCap = cap
            var server = HTTP2Connection(role: .server, configuration: wide)
            #expect(server.configuration.encoderTableSizeCap == kept)
            var hello = HTTP2ConnectionPreface.bytes
            HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.headerTableSize, 8192)], ack: false)), into: &hello)
            #expect(server.receive(hello).failure == nil)
        }
    }

    /// A SETTINGS frame that lowers the header table and raises it again has the encoder
    /// signal the lowest size first (RFC 7541 §4.2): only the last value was applied, so the
    /// peer, which had evicted down to 0, read the next block against a table it no longer
    /// had. Found by review.
    @Test func aTableSizeLoweredAndRaisedInOneSettingsIsSignalledAtItsLowest() throws {
        var client = HTTP2Connection(role: .client)
        _ = client.takeOutput()
        var settings: [UInt8] = []
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.headerTableSize, 0),
                                                                              HTTP2Setting(.headerTableSize, 4096)], ack: false)),
                                into: &settings)
        #expect(client.receive(settings).failure == nil)
        _ = client.takeOutput()
        _ = try client.openStream(headers: ConnectionPair.request)
        let frames = try HTTP2FrameTests.frames(in: client.takeOutput(), maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize)
        guard case let .headers(fragment, _, _)? = frames.first(where: { $0.streamID == 1 })?.payload else {
            Issue.record("no HEADERS in \(frames)")
            return
        }
        // 0x20: a size update to 0; then one to 4,096 (0x3f 0xe1 0x1f).
        #expect(Array(fragment.prefix(4)) == [0x20, 0x3F, 0xE1, 0x1F])
    }
}

/// A client and a server that exchange one request and its answer.
struct HTTP2ConnectionPair {
    var pair = ConnectionPair()

    mutating func exchange(response: [HPACKHeader], trailers: [HPACKHeader]) throws -> [HTTP2Event] {
        pair.pump()
        let id = try pair.client.openStream(headers: ConnectionPair.request)
        try pair.client.sendData([0, 0, 0, 0, 0], streamID: id, endStream: true)
        pair.pump()
        try pair.server.sendHeaders(response, streamID: id, endStream: false)
        try pair.server.sendHeaders(trailers, streamID: id, endStream: true)
        pair.pump()
        return pair.clientEvents
    }
}
