import Foundation
@testable import SwitchboardHTTP2
import SwitchboardIO
import SwitchboardRuntime

/// A raw HTTP/2 server over a real loopback socket (port 0) for testing our client: each
/// accepted connection is handed, on a thread of its own, to `script`, which reads the
/// client's frames and writes whatever bytes it likes (hostile ones included). The socket is
/// closed when the script returns. Call `stop()` when done.
final class RawHTTP2Server: @unchecked Sendable {
    private let listener: TCPListener
    /// The port it listens on.
    let port: Int
    private let accepted = Locked(0)
    /// How many connections it has accepted.
    var acceptedCount: Int { accepted.withLock { $0 } }

    /// Accepts up to `connections` connections; `script` gets each one and its index (0 first).
    init(connections: Int = 1, _ script: @escaping @Sendable (RawHTTP2Connection, Int) -> Void) throws {
        let listener = try TCPListener()
        self.listener = listener
        port = listener.port
        let accepted = self.accepted
        Thread.detachNewThread {
            for index in 0..<connections {
                guard let socket = listener.accept() else { return }
                accepted.withLock { $0 += 1 }
                Thread.detachNewThread {
                    script(RawHTTP2Connection(socket: socket), index)
                    socket.close()
                }
            }
        }
    }

    /// Stops listening (a connection being served goes on until its script returns).
    func stop() {
        listener.close()
    }
}

/// A frame the client sent, and when the bytes that completed it arrived.
struct ReceivedFrame: Sendable {
    let frame: HTTP2Frame
    let at: ContinuousClock.Instant
}

/// One accepted connection, read and written with blocking calls from its script's thread.
final class RawHTTP2Connection: @unchecked Sendable {
    let socket: TCPSocket
    private var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: true)
    private var lastArrival = ContinuousClock.now
    /// Every frame the client has sent so far, in order.
    private(set) var received: [ReceivedFrame] = []
    /// The client closed its end (or sent bytes that are not HTTP/2, or reading failed).
    private(set) var ended = false

    init(socket: TCPSocket) {
        self.socket = socket
    }

    /// Reads until a frame satisfies `condition` (returned), the client closes or `timeout`
    /// passes (nil). Frames read past the one returned wait for the next call.
    @discardableResult
    func read(for timeout: Duration, until condition: (HTTP2Frame) -> Bool = { _ in false }) -> ReceivedFrame? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            do throws(HTTP2ProtocolViolation) {
                while let frame = try decoder.nextFrame() {
                    let entry = ReceivedFrame(frame: frame, at: lastArrival)
                    received.append(entry)
                    if condition(frame) { return entry }
                }
            } catch {
                ended = true
                return nil
            }
            guard !ended, ContinuousClock.now < deadline else { return nil }
            do throws(NetworkError) {
                try socket.setReadDeadline(deadline)
                let bytes = try socket.read(maximum: 65_536)
                lastArrival = .now
                if bytes.isEmpty { ended = true } else { decoder.append(bytes) }
            } catch {
                if case .timeout = error { return nil }
                ended = true
            }
        }
    }

    /// The settings of the client's first SETTINGS frame, once read.
    var clientSettings: [HTTP2Setting]? {
        for entry in received {
            if case let .settings(settings, ack) = entry.frame.payload, !ack { return settings }
        }
        return nil
    }

    /// Writes `bytes` (a client that has gone is not an error here).
    func send(_ bytes: [UInt8]) {
        try? socket.write(bytes)
    }

    /// Writes one frame.
    func send(_ streamID: UInt32, _ payload: HTTP2Frame.Payload) {
        send(Self.frame(streamID, payload))
    }

    /// This side's (empty) SETTINGS and the acknowledgement of the client's.
    func greet(settings: [HTTP2Setting] = []) {
        send(Self.settingsAndAcknowledgement(settings))
    }

    static func frame(_ streamID: UInt32, _ payload: HTTP2Frame.Payload) -> [UInt8] {
        var bytes: [UInt8] = []
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: streamID, payload: payload), into: &bytes)
        return bytes
    }

    static func settingsAndAcknowledgement(_ settings: [HTTP2Setting] = []) -> [UInt8] {
        frame(0, .settings(settings, ack: false)) + frame(0, .settings([], ack: true))
    }

    /// A gRPC response's headers (not ending the stream), from a fresh encoder: HPACK
    /// indexes are relative, so a block that refers only to entries it adds itself decodes
    /// right whatever blocks came before.
    static func responseHeaders(_ streamID: UInt32) -> [UInt8] {
        var encoder = HPACKEncoder()
        var block: [UInt8] = []
        encoder.encode([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")], into: &block)
        return frame(streamID, .headers(fragment: block[...], endStream: false, endHeaders: true))
    }
}

extension HTTP2Frame {
    /// A PING that asks for an answer (not an acknowledgement).
    var isPingRequest: Bool {
        if case let .ping(_, ack) = payload { return !ack }
        return false
    }

    /// GOAWAY, or RST_STREAM on any stream.
    var isGoAwayOrReset: Bool {
        switch payload {
        case .goAway, .rstStream: return true
        default: return false
        }
    }
}
