import Foundation
import SwitchboardWebSocket
import Testing

/// The sans-IO core, driven without sockets: byte by byte and split at every boundary.
@Suite struct FrameParserTests {
    /// Parses `bytes` fed in the given chunk sizes, concatenating payload chunks per frame.
    func frames(_ bytes: [UInt8], chunks: [Int]? = nil, masked: Bool = false) throws -> [(FrameHeader, [UInt8])] {
        var parser = FrameParser(expectMasked: masked, maximumFrameSize: 1 << 20)
        var result: [(FrameHeader, [UInt8])] = []
        var header: FrameHeader?
        var payload: [UInt8] = []
        var offset = 0
        let sizes = chunks ?? [bytes.count]
        for size in sizes + [bytes.count] where offset < bytes.count {
            let end = min(bytes.count, offset + size)
            parser.append(bytes[offset..<end])
            offset = end
            while let event = try parser.next() {
                switch event {
                case let .header(h): header = h; payload = []
                case let .payload(chunk): payload += chunk
                case .frameEnd: result.append((header!, payload))
                }
            }
        }
        return result
    }

    /// RFC 6455 §5.7 examples.
    static let unmaskedHello: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]
    static let maskedHello: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]
    static let fragmentedHello: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F]

    @Test func rfcExamplesParseAtEverySplit() throws {
        for (bytes, masked) in [(Self.unmaskedHello, false), (Self.maskedHello, true), (Self.fragmentedHello, false)] {
            let whole = try frames(bytes, masked: masked)
            #expect(whole.map(\.1).flatMap { $0 } == Array("Hello".utf8))
            // Byte by byte.
            let single = try frames(bytes, chunks: Array(repeating: 1, count: bytes.count), masked: masked)
            #expect(single.map(\.1) == whole.map(\.1))
            // Every two-way split.
            for split in 1..<bytes.count {
                let parts = try frames(bytes, chunks: [split, bytes.count - split], masked: masked)
                #expect(parts.map(\.1) == whole.map(\.1), "split at \(split)")
                #expect(parts.map(\.0.fin) == whole.map(\.0.fin))
            }
        }
    }

    @Test func allThreeLengthFormsParse() throws {
        for length in [0, 125, 126, 127, 128, 65535, 65536, 200_000] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            let bytes = FrameWriter.frame(opcode: .binary, payload: payload, mask: false)
            let parsed = try frames(bytes, chunks: [1, 2, 3, 997])
            #expect(parsed.count == 1 && parsed[0].1 == payload && parsed[0].0.payloadLength == UInt64(length))
        }
        // A non-minimal length encoding is accepted.
        let padded: [UInt8] = [0x82, 0x7E, 0x00, 0x03, 1, 2, 3]
        #expect(try frames(padded)[0].1 == [1, 2, 3])
    }

    @Test func maskedFramesRoundTrip() throws {
        let payload = Array("masking keys come from the secure generator".utf8)
        let first = FrameWriter.frame(opcode: .text, payload: payload, mask: true)
        let second = FrameWriter.frame(opcode: .text, payload: payload, mask: true)
        #expect(first != second, "each frame gets a fresh key")
        #expect(try frames(first, masked: true)[0].1 == payload)
    }

    /// Payloads are unmasked inside the parser's buffer when that is safe; a slice handed out
    /// earlier must never see a later frame's unmasking, in the same read or after the next.
    @Test func payloadSlicesSurviveLaterUnmasking() throws {
        let payloads = (0..<4).map { index in (0..<(50 + 40 * index)).map { UInt8(truncatingIfNeeded: $0 * 7 + index) } }
        let wire = payloads.map { FrameWriter.frame(opcode: .binary, payload: $0, mask: true) }
        var parser = FrameParser(expectMasked: true, maximumFrameSize: 1 << 20)
        var kept: [ArraySlice<UInt8>] = []
        // Three frames in one read, then a fourth while the first three slices are still held.
        for read in [wire[0] + wire[1] + wire[2], wire[3]] {
            parser.append(read)
            while let event = try parser.next() {
                if case let .payload(chunk) = event { kept.append(chunk) }
            }
        }
        #expect(kept.map(Array.init) == payloads)
    }

    func violation(_ bytes: [UInt8], masked: Bool = false, limit: UInt64 = 1 << 20) -> WebSocketCloseCode? {
        var parser = FrameParser(expectMasked: masked, maximumFrameSize: limit)
        parser.append(bytes)
        do {
            while try parser.next() != nil {}
            return nil
        } catch {
            guard case let .protocolViolation(code, _) = error else { return nil }
            return code
        }
    }

    @Test func malformedHeadersFailWithTheRightCode() {
        #expect(violation([0xC1, 0x00]) == .protocolError)              // RSV1
        #expect(violation([0x83, 0x00]) == .protocolError)              // reserved data opcode
        #expect(violation([0x8B, 0x00]) == .protocolError)              // reserved control opcode
        #expect(violation([0x09, 0x00]) == .protocolError)              // fragmented ping
        #expect(violation([0x89, 0x7E, 0x00, 0x7E]) == .protocolError)  // ping over 125 bytes
        #expect(violation([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0]) == .protocolError) // 64-bit MSB
        #expect(violation(Self.maskedHello) == .protocolError)          // client got a masked frame
        #expect(violation(Self.unmaskedHello, masked: true) == .protocolError) // server got an unmasked one
        #expect(violation([0x82, 0x7F, 0, 0, 0, 1, 0, 0, 0, 0], limit: 1024) == .messageTooBig) // before allocation
    }
}

@Suite struct ConnectionCoreTests {
    func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        FrameWriter.frame(opcode: opcode, payload: payload, fin: fin, mask: false)
    }

    func delivered(_ actions: [WebSocketConnectionCore.Action]) -> [WebSocketMessage] {
        actions.compactMap { if case let .deliver(message) = $0 { return message.message } else { return nil } }
    }

    func closeCode(_ actions: [WebSocketConnectionCore.Action]) -> WebSocketCloseCode? {
        for action in actions {
            if case let .closeTransport(info) = action { return info.code }
            if case let .peerClosed(info) = action { return info.code }
        }
        return nil
    }

    /// The close frames the core sent, decoded: (code, reason).
    func sentCloses(_ actions: [WebSocketConnectionCore.Action]) throws -> [UInt16] {
        var codes: [UInt16] = []
        for case let .send(bytes) in actions {
            var parser = FrameParser(expectMasked: true, maximumFrameSize: 1 << 20)
            parser.append(bytes)
            var header: FrameHeader?
            var payload: [UInt8] = []
            while let event = try parser.next() {
                switch event {
                case let .header(h): header = h
                case let .payload(chunk): payload += chunk
                case .frameEnd: if header?.opcode == .close { codes.append(payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : 0) }
                }
            }
        }
        return codes
    }

    @Test func fragmentsReassembleWithInterleavedPings() throws {
        var core = WebSocketConnectionCore(role: .client)
        let bytes = frame(.text, Array("Hel".utf8), fin: false) + frame(.ping, [1, 2]) + frame(.continuation, Array("lo ".utf8), fin: false)
            + frame(.continuation, Array("wörld".utf8))
        var actions: [WebSocketConnectionCore.Action] = []
        for byte in bytes { actions += core.receive([byte]) }
        #expect(delivered(actions) == [.text("Hello wörld")])
        let pongs = actions.filter { if case .send = $0 { return true } else { return false } }
        #expect(pongs.count == 1, "the ping is answered mid-message")
    }

    /// The reader's path: raw bytes, actions appended to an array it keeps, messages as the
    /// received bytes with their kind.
    @Test func receivingIntoAKeptArrayAppendsInOrder() throws {
        var core = WebSocketConnectionCore(role: .server)
        let bytes = FrameWriter.frame(opcode: .text, payload: Array("hé".utf8), mask: true)
            + FrameWriter.frame(opcode: .ping, payload: [9], mask: true)
            + FrameWriter.frame(opcode: .binary, payload: [0, 255, 1], mask: true)
        var actions: [WebSocketConnectionCore.Action] = [.pong([7])]
        bytes.withUnsafeBytes { core.receive($0, into: &actions) }
        #expect(actions.count == 4)
        #expect(actions.first == .pong([7]), "earlier actions stay first")
        #expect(actions[1] == .deliver(ReceivedWebSocketMessage(isText: true, payload: Array("hé".utf8)[...])))
        #expect(actions[2] == .send(FrameWriter.frame(opcode: .pong, payload: [9], maskingKey: nil)))
        #expect(actions[3] == .deliver(ReceivedWebSocketMessage(isText: false, payload: [0, 255, 1])))
        #expect(delivered(actions) == [.text("hé"), .binary(Data([0, 255, 1]))])
    }

    @Test func invalidUTF8FailsFastAcrossFragments() throws {
        var core = WebSocketConnectionCore(role: .client)
        // The bad byte sits in the second of three fragments; the third never needs to arrive.
        let first = core.receive(frame(.text, Array("κόσμε".utf8), fin: false))
        #expect(first.isEmpty)
        let second = core.receive(frame(.continuation, [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80], fin: false))
        #expect(closeCode(second) == .invalidPayload)
        #expect(try sentCloses(second) == [1007])
        // A scalar split across fragments is fine.
        var ok = WebSocketConnectionCore(role: .client)
        let euro: [UInt8] = [0xE2, 0x82, 0xAC]
        let actions = ok.receive(frame(.text, [euro[0]], fin: false)) + ok.receive(frame(.continuation, [euro[1]], fin: false)) + ok.receive(frame(.continuation, [euro[2]]))
        #expect(delivered(actions) == [.text("€")])
        // A text message may not end inside a scalar.
        var truncated = WebSocketConnectionCore(role: .client)
        #expect(closeCode(truncated.receive(frame(.text, [0xE2, 0x82]))) == .invalidPayload)
    }

    @Test func fragmentationErrorsFailWith1002() {
        var stray = WebSocketConnectionCore(role: .client)
        #expect(closeCode(stray.receive(frame(.continuation, [1]))) == .protocolError)
        var nested = WebSocketConnectionCore(role: .client)
        #expect(closeCode(nested.receive(frame(.text, [0x61], fin: false) + frame(.binary, [1]))) == .protocolError)
    }

    @Test func messagesOverTheCapFailWith1009BeforeTheirPayload() {
        var core = WebSocketConnectionCore(role: .client, configuration: .init(maximumMessageSize: 1000))
        // Only the header of a 2000-byte frame: rejected without waiting for (or buffering) the payload.
        #expect(closeCode(core.receive([0x82, 0x7E, 0x07, 0xD0])) == .messageTooBig)
        // Fragments that add up past the cap.
        var fragmented = WebSocketConnectionCore(role: .client, configuration: .init(maximumMessageSize: 1000, maximumFrameSize: 600))
        let first = fragmented.receive(frame(.binary, Array(repeating: 1, count: 600), fin: false))
        #expect(closeCode(first) == nil)
        #expect(closeCode(fragmented.receive([0x00, 0x7E, 0x02, 0x58])) == .messageTooBig)
    }

    /// A nonsensical limit is a limit, not a trap: a negative one takes no payload at all.
    @Test func negativeLimitsRefuseEveryPayload() {
        var core = WebSocketConnectionCore(role: .client, configuration: .init(maximumMessageSize: -1))
        #expect(closeCode(core.receive(frame(.binary, [1]))) == .messageTooBig)
        var empty = WebSocketConnectionCore(role: .client, configuration: .init(maximumMessageSize: -1))
        #expect(delivered(empty.receive(frame(.binary, []))) == [.binary(Data())])
    }

    @Test func closeHandshakeEchoesValidCodes() throws {
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4401, 4409, 4999] {
            var core = WebSocketConnectionCore(role: .client)
            let actions = core.receive(frame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array("bye".utf8)))
            // The peer's close reaches the application first; it may still send what it owes.
            guard case let .peerClosed(info)? = actions.last else {
                Issue.record("no close for \(code)")
                continue
            }
            #expect(info.code.rawValue == code && info.reason == "bye" && info.wasClean)
            #expect(core.frame(for: .text("owed echo")) != nil)
            let reply = core.close()
            #expect(try sentCloses(reply) == [code])
            guard case .closeTransport? = reply.last else {
                Issue.record("the reply ends the connection")
                continue
            }
        }
    }

    @Test func nothingIsAnsweredOrDeliveredAfterThePeersClose() {
        var core = WebSocketConnectionCore(role: .client)
        _ = core.receive(frame(.close, [0x03, 0xE8]))
        let later = core.receive(frame(.ping, [1]) + frame(.text, [0x61]))
        #expect(later.isEmpty)
    }

    /// Junk after the peer's clean close is discarded (RFC 6455 §1.4), in the same read or a
    /// later one: our reply echoes its 1000 instead of failing with 1002, 1007 or 1009.
    @Test func junkAfterThePeersCloseLeavesItsCloseClean() throws {
        let junk: [[UInt8]] = [[0x83, 0x00], frame(.text, [0xFF]), frame(.binary, [UInt8](repeating: 0, count: 70_000))]
        for bytes in junk {
            for sameRead in [true, false] {
                var core = WebSocketConnectionCore(role: .client, configuration: .init(maximumMessageSize: 65_536))
                var actions = core.receive(sameRead ? frame(.close, [0x03, 0xE8]) + bytes : frame(.close, [0x03, 0xE8]))
                if !sameRead { actions += core.receive(bytes) }
                #expect(try sentCloses(actions).isEmpty, "nothing is sent for the junk")
                guard case let .peerClosed(info)? = actions.last else {
                    Issue.record("expected only the peer's close, got \(actions)")
                    continue
                }
                #expect(info.code == .normalClosure && info.wasClean)
                #expect(try sentCloses(core.close(code: .normalClosure, reason: "")) == [1000])
            }
        }
    }

    @Test func invalidCloseFramesFail() {
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] {
            var core = WebSocketConnectionCore(role: .client)
            #expect(closeCode(core.receive(frame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)]))) == .protocolError, "code \(code)")
        }
        var oneByte = WebSocketConnectionCore(role: .client)
        #expect(closeCode(oneByte.receive(frame(.close, [0x03]))) == .protocolError)
        var badReason = WebSocketConnectionCore(role: .client)
        #expect(closeCode(badReason.receive(frame(.close, [0x03, 0xE8, 0xFF]))) == .invalidPayload)
        var empty = WebSocketConnectionCore(role: .client)
        let actions = empty.receive(frame(.close, []))
        #expect(closeCode(actions) == .noStatusReceived)
    }

    @Test func ourCloseCompletesWhenThePeerAnswers() throws {
        var core = WebSocketConnectionCore(role: .client)
        let sent = core.close(code: .goingAway, reason: "bye")
        #expect(try sentCloses(sent) == [1001])
        #expect(core.frame(for: .text("late")) == nil, "nothing is sent after close")
        // Data after our close is ignored; the peer's close completes the handshake.
        let actions = core.receive(frame(.text, Array("ignored".utf8)) + frame(.close, [0x03, 0xE9]))
        #expect(delivered(actions).isEmpty)
        guard case let .closeTransport(info)? = actions.last else {
            Issue.record("expected closeTransport")
            return
        }
        #expect(info.wasClean && info.code == .goingAway)
        // Codes that are never sent are replaced.
        var other = WebSocketConnectionCore(role: .client)
        #expect(try sentCloses(other.close(code: .abnormalClosure)) == [1000])
    }

    @Test func aDroppedTransportIsAbnormal() {
        var core = WebSocketConnectionCore(role: .server)
        #expect(core.transportClosed()?.code == .abnormalClosure)
        #expect(core.transportClosed() == nil)
    }

    /// A peer that drops TCP after our close, without its own, ends with 1006 whatever code we
    /// sent (RFC 6455 §7.1.5, §7.4.1): it reported our 1001 as if the peer had agreed to it.
    @Test func aDroppedTransportAfterOurCloseIsAbnormal() {
        var core = WebSocketConnectionCore(role: .server)
        _ = core.close(code: .goingAway, reason: "idle timeout")
        let info = core.transportClosed()
        #expect(info?.code == .abnormalClosure)
        #expect(info?.wasClean == false)
        #expect(info?.reason.contains("1001") == true && info?.reason.contains("idle timeout") == true, "\(String(describing: info))")
        var normal = WebSocketConnectionCore(role: .client)
        _ = normal.close()
        let normalInfo = normal.transportClosed()
        #expect(normalInfo?.code == .abnormalClosure)
        #expect(normalInfo?.reason.contains("sent 1000") == true, "\(String(describing: normalInfo))")
    }

    @Test func theServerRequiresMaskedFrames() {
        var server = WebSocketConnectionCore(role: .server)
        #expect(closeCode(server.receive(frame(.text, [0x61]))) == .protocolError)
        var ok = WebSocketConnectionCore(role: .server)
        #expect(delivered(ok.receive(FrameWriter.frame(opcode: .binary, payload: [9], mask: true))) == [.binary(Data([9]))])
    }

    @Test func unsolicitedPongsAreReportedNotAnswered() {
        var core = WebSocketConnectionCore(role: .client)
        let actions = core.receive(frame(.pong, [7]))
        #expect(actions == [.pong([7])])
    }
}

@Suite struct HandshakeTests {
    @Test func sha1MatchesPublishedVectors() {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.hash([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(hex(SHA1.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(hex(SHA1.hash(Array(repeating: UInt8(ascii: "a"), count: 1000))) == "291e9a6c66994949b57ba5e650361e98fc36b1ba")
        // RFC 6455 §1.3.
        #expect(WebSocketHandshake.acceptValue(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func clientRequestAndResponseValidation() throws {
        let request = WebSocketHandshake.ClientRequest(
            host: "chat.example", port: 443, path: "/v1/websocket/", isSecure: true,
            headers: [HTTPHeaderField(name: "Authorization", value: "Basic dTpw")], subprotocols: ["chat"])
        let text = String(decoding: request.bytes, as: UTF8.self)
        #expect(text.hasPrefix("GET /v1/websocket/ HTTP/1.1\r\nHost: chat.example\r\n"))
        #expect(text.contains("Sec-WebSocket-Version: 13\r\n") && text.contains("Authorization: Basic dTpw\r\n") && text.hasSuffix("\r\n\r\n"))
        #expect(Data(base64Encoded: request.key)?.count == 16)

        let accept = WebSocketHandshake.acceptValue(for: request.key)
        func head(_ text: String) throws -> HTTPHead { try #require(try HTTPHead.parse(Array(text.utf8))?.head) }
        let good = try head("HTTP/1.1 101 Switching Protocols\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Protocol: chat\r\n\r\n")
        #expect(try request.validate(good) == "chat")
        let wrongKey = try head("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n")
        #expect(throws: WebSocketError.invalidUpgradeResponse("wrong Sec-WebSocket-Accept")) { try request.validate(wrongKey) }
        let noUpgrade = try head("HTTP/1.1 101 OK\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n")
        #expect(throws: WebSocketError.self) { try request.validate(noUpgrade) }
        // Each field once, and a status of exactly three digits (from the parser review).
        let twoAccepts = try head("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\nSec-WebSocket-Accept: bogus\r\n\r\n")
        #expect(throws: WebSocketError.invalidUpgradeResponse("wrong Sec-WebSocket-Accept")) { try request.validate(twoAccepts) }
        let twoUpgrades = try head("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nUpgrade: h2c\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n")
        #expect(throws: WebSocketError.self) { try request.validate(twoUpgrades) }
        let kelvin = try head("HTTP/1.1 101 OK\r\nUpgrade: websoc\u{212A}et\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n")
        #expect(throws: WebSocketError.self) { try request.validate(kelvin) }
        // The accept value and the subprotocol are compared as bytes: U+212A (Kelvin) is
        // canonically equal to `K`, and `String` equality let it pass.
        let withK = try #require((0..<200).lazy.map { _ in
            WebSocketHandshake.ClientRequest(host: "chat.example", port: 443, path: "/", isSecure: true, headers: [], subprotocols: ["Kchat"])
        }.first { WebSocketHandshake.acceptValue(for: $0.key).contains("K") })
        let kelvinAccept = WebSocketHandshake.acceptValue(for: withK.key).replacingOccurrences(of: "K", with: "\u{212A}")
        let kelvinAcceptHead = try head("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(kelvinAccept)\r\n\r\n")
        #expect(throws: WebSocketError.invalidUpgradeResponse("wrong Sec-WebSocket-Accept")) { try withK.validate(kelvinAcceptHead) }
        let rightAccept = WebSocketHandshake.acceptValue(for: withK.key)
        let kelvinProtocol = try head("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(rightAccept)\r\nSec-WebSocket-Protocol: \u{212A}chat\r\n\r\n")
        #expect(throws: WebSocketError.self) { try withK.validate(kelvinProtocol) }
        let plainProtocol = try head("HTTP/1.1 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(rightAccept)\r\nSec-WebSocket-Protocol: Kchat\r\n\r\n")
        #expect(try withK.validate(plainProtocol) == "Kchat")
        for status in ["+101", "0101", "1O1"] {
            let odd = try head("HTTP/1.1 \(status) OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n")
            #expect(throws: WebSocketError.invalidUpgradeResponse("malformed status line"), "\(status)") { try request.validate(odd) }
        }
        let version2 = try head("HTTP/2.0 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n")
        #expect(throws: WebSocketError.invalidUpgradeResponse("malformed status line")) { try request.validate(version2) }
        let http10 = try head("HTTP/1.0 101 OK\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n")
        #expect(try request.validate(http10) == nil)
        let rejected = try head("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 30\r\nContent-Length: 4\r\n\r\n")
        do {
            _ = try request.validate(rejected, body: Array("slow".utf8))
            Issue.record("a 429 must be rejected")
        } catch {
            guard case let .upgradeRejected(status, headers, body) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(status == 429 && headers.contains(HTTPHeaderField(name: "Retry-After", value: "30")) && body == Array("slow".utf8))
        }
    }

    @Test func requestsThatCouldSmuggleAHeaderAreRefusedBeforeSending() throws {
        func request(headers: [HTTPHeaderField] = [], path: String = "/", subprotocols: [String] = []) -> WebSocketHandshake.ClientRequest {
            WebSocketHandshake.ClientRequest(host: "chat.example", port: 443, path: path, isSecure: true, headers: headers, subprotocols: subprotocols)
        }
        try request(headers: [HTTPHeaderField(name: "User-Agent", value: "Signal-Android/7.0 (über\tcafé)")], subprotocols: ["chat.v2"]).checkSendable()
        let bad: [WebSocketHandshake.ClientRequest] = [
            request(headers: [HTTPHeaderField(name: "X-Token", value: "a\r\nAuthorization: Basic eA==")]),
            request(headers: [HTTPHeaderField(name: "X-Token", value: "a\nb")]),
            request(headers: [HTTPHeaderField(name: "X-Token", value: "a\u{0}b")]),
            request(headers: [HTTPHeaderField(name: "X Token", value: "a")]),
            request(headers: [HTTPHeaderField(name: "", value: "a")]),
            request(headers: [HTTPHeaderField(name: "X-Token:", value: "a")]),
            request(path: "/a b"),
            request(path: "/a\r\nX: y"),
            request(subprotocols: ["chat, evil"]),
            // More fields than a server reading as ours takes (found by the fuzzer).
            request(headers: (0..<96).map { HTTPHeaderField(name: "X-\($0)", value: "v") }),
        ]
        // The most that still reads back.
        let most = request(headers: (0..<94).map { HTTPHeaderField(name: "X-\($0)", value: "v") }, subprotocols: ["chat"])
        try most.checkSendable()
        #expect(try HTTPHead.parse(most.bytes)?.head.headers.count == HTTPHead.maximumHeaderCount)
        for candidate in bad {
            #expect(throws: WebSocketError.self, "\(candidate.headers) \(candidate.path) \(candidate.subprotocols)") { try candidate.checkSendable() }
        }
    }

    @Test func serverSideValidatesUpgrades() throws {
        let key = WebSocketHandshake.makeKey()
        let text = "GET /chat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: a, b\r\n\r\n"
        let request = try WebSocketHandshake.parseUpgrade(try #require(try HTTPHead.parse(Array(text.utf8))?.head))
        #expect(request.path == "/chat" && request.subprotocols == ["a", "b"])
        let response = String(decoding: WebSocketHandshake.acceptResponse(for: request, subprotocol: "b"), as: UTF8.self)
        #expect(response.contains("Sec-WebSocket-Accept: \(WebSocketHandshake.acceptValue(for: key))\r\n"))
        let oldVersion = text.replacingOccurrences(of: "Version: 13", with: "Version: 8")
        #expect(throws: WebSocketError.self) { try WebSocketHandshake.parseUpgrade(try #require(try HTTPHead.parse(Array(oldVersion.utf8))?.head)) }
        let badKey = text.replacingOccurrences(of: key, with: "short")
        #expect(throws: WebSocketError.self) { try WebSocketHandshake.parseUpgrade(try #require(try HTTPHead.parse(Array(badKey.utf8))?.head)) }
    }

    @Test func httpHeadsParseIncrementallyWithALimit() throws {
        let text = Array("HTTP/1.1 101 Switching Protocols\r\nA: b\r\n\r\nframe".utf8)
        for cut in 0..<(text.count - 5) { #expect(try HTTPHead.parse(Array(text[0..<cut])) == nil) }
        let parsed = try #require(try HTTPHead.parse(text))
        #expect(parsed.consumed == text.count - 5 && parsed.head.value("a") == "b")
        #expect(throws: WebSocketError.self) { try HTTPHead.parse(Array(repeating: UInt8(ascii: "a"), count: 20_000)) }
        // Byte by byte, each call searching only from where the last one stopped (less 3, as a
        // "\r\n\r\n" may straddle): the same head at the same place.
        var searched = 0
        var found: (head: HTTPHead, consumed: Int)?
        for cut in 1...text.count where found == nil {
            found = try HTTPHead.parse(Array(text[0..<cut]), searchingFrom: searched)
            searched = max(0, cut - 3)
        }
        #expect(found?.consumed == text.count - 5 && found?.head.value("a") == "b")
        // Past 100 header fields (a few thousand tiny ones fit in 16 KiB): refused.
        let many = Array(("GET / HTTP/1.1\r\n" + String(repeating: "a:\r\n", count: 101) + "\r\n").utf8)
        #expect(throws: WebSocketError.invalidHTTP("more than 100 header fields")) { try HTTPHead.parse(many) }
        let enough = Array(("GET / HTTP/1.1\r\n" + String(repeating: "a:\r\n", count: 100) + "\r\n").utf8)
        #expect(try HTTPHead.parse(enough)?.head.headers.count == 100)
        #expect(throws: WebSocketError.self) { try HTTPHead.parse(Array("HTTP/1.1 101 OK\r\nno colon\r\n\r\n".utf8)) }
    }
}

@Suite struct UTF8StreamValidatorTests {
    @Test func kuhnStyleCases() {
        func valid(_ bytes: [UInt8]) -> Bool {
            var validator = UTF8StreamValidator()
            return validator.feed(bytes) && validator.isComplete
        }
        #expect(valid(Array("κόσμε 🎉 €".utf8)))
        #expect(valid([0xEF, 0xBF, 0xBF])) // U+FFFF is a valid noncharacter
        #expect(valid([0xF4, 0x8F, 0xBF, 0xBF])) // U+10FFFF
        #expect(!valid([0xC0, 0x80]))   // overlong NUL
        #expect(!valid([0xE0, 0x80, 0xAF])) // overlong '/'
        #expect(!valid([0xED, 0xA0, 0x80])) // surrogate
        #expect(!valid([0xF4, 0x90, 0x80, 0x80])) // above U+10FFFF
        #expect(!valid([0x80]))          // lone continuation
        #expect(!valid([0xFE]))
        #expect(!valid([0xE2, 0x82]))    // truncated
        // Every split of a 4-byte scalar.
        let party: [UInt8] = [0xF0, 0x9F, 0x8E, 0x89]
        for split in 1..<4 {
            var validator = UTF8StreamValidator()
            #expect(validator.feed(party[0..<split]) && !validator.isComplete)
            #expect(validator.feed(party[split...]) && validator.isComplete)
        }
    }
}
