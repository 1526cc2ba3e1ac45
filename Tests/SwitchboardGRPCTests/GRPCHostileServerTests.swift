import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime
import Testing

/// What a hostile HTTP/2 server sends our client once it has read the call's HEADERS (after
/// its own SETTINGS and the acknowledgement of the client's).
enum HostileServerFrame: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// A HEADERS block that refers to HPACK index 0, which does not exist.
    case invalidHPACKBlock
    /// A DATA frame one byte over the MAX_FRAME_SIZE the client advertised.
    case frameOverMaxFrameSize
    /// A connection WINDOW_UPDATE taking the window past 2^31-1.
    case windowOverflow
    /// DATA on stream 3, which the client has not opened.
    case dataOnIdleStream
    /// DATA on the call's stream before any HEADERS: a stream error.
    case dataBeforeHeaders
    /// RST_STREAM ENHANCE_YOUR_CALM on the call's stream.
    case resetWithEnhanceYourCalm

    var testDescription: String { rawValue }

    /// The client's advertised MAX_FRAME_SIZE (its default).
    static let clientMaxFrameSize = HTTP2ConnectionConfiguration().maxFrameSize

    var bytes: [UInt8] {
        switch self {
        case .invalidHPACKBlock:
            return RawHTTP2Connection.frame(1, .headers(fragment: [0x80], endStream: false, endHeaders: true))
        case .frameOverMaxFrameSize:
            let length = Int(Self.clientMaxFrameSize) + 1
            var bytes: [UInt8] = []
            HTTP2FrameEncoder.writeHeader(length: length, type: .data, flags: 0, streamID: 1, into: &bytes)
            return bytes + [UInt8](repeating: 0, count: length)
        case .windowOverflow:
            return RawHTTP2Connection.frame(0, .windowUpdate(increment: 0x7fff_ffff))
        case .dataOnIdleStream:
            return RawHTTP2Connection.frame(3, .data([1], endStream: false, flowControlledLength: 1))
        case .dataBeforeHeaders:
            return RawHTTP2Connection.frame(1, .data([0, 0, 0, 0, 0], endStream: false, flowControlledLength: 5))
        case .resetWithEnhanceYourCalm:
            return RawHTTP2Connection.frame(1, .rstStream(.enhanceYourCalm))
        }
    }

    /// The code of the GOAWAY the client answers with (a connection error), if any.
    var goAway: HTTP2ErrorCode? {
        switch self {
        case .invalidHPACKBlock: return .compressionError
        case .frameOverMaxFrameSize: return .frameSizeError
        case .windowOverflow: return .flowControlError
        case .dataOnIdleStream: return .protocolError
        case .dataBeforeHeaders, .resetWithEnhanceYourCalm: return nil
        }
    }

    /// The code of the RST_STREAM the client answers with (a stream error), if any. A reset
    /// from the peer is never answered with another (RFC 9113 §5.4.2).
    var reset: HTTP2ErrorCode? {
        self == .dataBeforeHeaders ? .protocolError : nil
    }

    /// What the call fails with.
    var error: TransportError {
        switch self {
        case .invalidHPACKBlock:
            return .disconnected(reason: DisconnectReason(.connectionLost, "COMPRESSION_ERROR: header block: HPACK: no table entry 0"))
        case .frameOverMaxFrameSize:
            return .disconnected(reason: DisconnectReason(
                .connectionLost, "FRAME_SIZE_ERROR: a DATA frame of \(Self.clientMaxFrameSize + 1) bytes exceeds MAX_FRAME_SIZE \(Self.clientMaxFrameSize)"))
        case .windowOverflow:
            return .disconnected(reason: DisconnectReason(.connectionLost, "FLOW_CONTROL_ERROR: WINDOW_UPDATE grows the connection window past 2^31-1"))
        case .dataOnIdleStream:
            return .disconnected(reason: DisconnectReason(.connectionLost, "PROTOCOL_ERROR: DATA on idle stream 3"))
        case .dataBeforeHeaders:
            return .unexpectedResponse("HTTP/2: PROTOCOL_ERROR: DATA before headers on stream 1")
        case .resetWithEnhanceYourCalm:
            // As gRPC maps it (and the guide says): RESOURCE_EXHAUSTED.
            return .grpcStatus(code: GRPCStatusCode.resourceExhausted.rawValue, message: "the server reset the stream with ENHANCE_YOUR_CALM", details: nil)
        }
    }

    /// What the client wrote back, seen from the server's side of the socket.
    struct Answer: Sendable {
        var sawRequest = false
        var advertisedMaxFrameSize: UInt32?
        var goAwayCode: HTTP2ErrorCode?
        var goAwayLastStreamID: UInt32?
        var resetCode: HTTP2ErrorCode?
        var resetStreamID: UInt32?
        /// The client closed the connection.
        var closed = false
    }

    /// Plays the server: reads the call, sends the hostile bytes, and reads what comes back.
    func play(on connection: RawHTTP2Connection) -> Answer {
        var answer = Answer()
        // The preface, SETTINGS and the call's HEADERS (stream 1), all before the server spoke.
        guard connection.read(for: .seconds(10), until: { $0.streamID == 1 && $0.type == .headers }) != nil else { return answer }
        answer.sawRequest = true
        answer.advertisedMaxFrameSize = connection.clientSettings?.first(where: { $0.id == .maxFrameSize })?.value
        connection.send(RawHTTP2Connection.settingsAndAcknowledgement() + bytes)
        // Something is expected back at once; when nothing is, half a second of silence says so.
        let expectsReply = goAway != nil || reset != nil
        var reply = connection.read(for: expectsReply ? .seconds(5) : .milliseconds(500), until: \.isGoAwayOrReset)
        if let first = reply, case let .rstStream(code) = first.frame.payload {
            answer.resetCode = code
            answer.resetStreamID = first.frame.streamID
            // A stream error: no GOAWAY follows.
            reply = connection.read(for: .milliseconds(300), until: \.isGoAwayOrReset)
        }
        if let last = reply, case let .goAway(lastStreamID, code, _) = last.frame.payload {
            answer.goAwayCode = code
            answer.goAwayLastStreamID = lastStreamID
            // After a GOAWAY the client reads on for `lingerAfterError` (500 ms), then closes.
            connection.read(for: .seconds(5))
        }
        answer.closed = connection.ended
        return answer
    }
}

/// Our client against a hostile HTTP/2 server, over a real socket: each violation is answered
/// on the wire with the code RFC 9113 gives it (GOAWAY for a connection error, RST_STREAM for
/// a stream error, nothing for the peer's own reset), and the call fails at once with a typed
/// error, never at its deadline.
@Suite(.timeLimit(.minutes(2)))
struct GRPCHostileServerTests {
    @Test(arguments: HostileServerFrame.allCases)
    func theClientAnswersAHostileServer(_ hostile: HostileServerFrame) async throws {
        let answer = Locked<HostileServerFrame.Answer?>(nil)
        let server = try RawHTTP2Server { connection, _ in
            let played = hostile.play(on: connection)
            answer.withLock { $0 = played }
        }
        defer { server.stop() }
        let transport = GRPCClientTransport<Unauthenticated>(host: "127.0.0.1", port: server.port)
        defer { transport.close() }
        let started = ContinuousClock.now
        let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])),
                                                                                     options: CallOptions(timeout: .seconds(30)))
        let took = ContinuousClock.now - started
        #expect(result.transportError == hostile.error, "\(result)")
        #expect(took < .seconds(15), "the call ended on the server's bytes after \(took), not at its deadline")
        // Not retried: one connection, whatever the outcome.
        #expect(transport.connectionsOpened == 1)
        #expect(await eventually(within: .seconds(20)) { answer.current != nil }, "the server's script finished")
        let seen = try #require(answer.current)
        #expect(seen.sawRequest, "the call's HEADERS reached the server")
        #expect(seen.advertisedMaxFrameSize == HostileServerFrame.clientMaxFrameSize)
        #expect(seen.goAwayCode == hostile.goAway, "GOAWAY written back: \(String(describing: seen.goAwayCode))")
        if hostile.goAway != nil {
            // A client processes no stream of the server's: its GOAWAY names none.
            #expect(seen.goAwayLastStreamID == 0)
            #expect(seen.closed, "the client closes the connection after its GOAWAY")
        } else {
            #expect(!seen.closed, "a stream error leaves the connection open")
        }
        #expect(seen.resetCode == hostile.reset, "RST_STREAM written back: \(String(describing: seen.resetCode))")
        if hostile.reset != nil { #expect(seen.resetStreamID == 1) }
    }
}
