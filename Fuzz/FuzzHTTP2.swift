// libFuzzer entry points for the HTTP/2 sans-IO core (SWITCHBOARD_FUZZ_TARGET picks one):
//   hpack  every input is a header block for a fresh decoder, then the same bytes twice on
//          one decoder; a decoded list must fit the limit it was given. Then a few blocks made
//          of it go to a decoder that remembers blocks and to one that does not: they must
//          read alike.
//   http2  every input is the peer's bytes after a valid preface and SETTINGS, cut as a socket
//          would cut them, fed to a server and to a client; neither may hold more than one
//          frame of input or more streams than it allows, and a connection that failed must
//          end its output with GOAWAY.
// Any crash, hang or sanitizer report is a finding. Run with scripts/fuzz.sh hpack|http2.
import Foundation

private let target = ProcessInfo.processInfo.environment["SWITCHBOARD_FUZZ_TARGET"] ?? "http2"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP2(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    if target == "hpack" {
        fuzzHPACK(bytes)
    } else {
        fuzzConnection(bytes)
    }
    return 0
}

private func fuzzHPACK(_ bytes: [UInt8]) {
    var fresh = HPACKDecoder(maximumTableSize: 4096, maximumHeaderListSize: 8192)
    if let block = try? fresh.decode(bytes) {
        if block.isTooLarge { precondition(block.headers.isEmpty, "a list over the limit kept headers") }
        precondition(block.listSize <= 8192 || block.isTooLarge, "a list over the limit was not flagged")
    }
    var shared = HPACKDecoder()
    _ = try? shared.decode(bytes)
    _ = try? shared.decode(bytes)
    precondition(shared.dynamicTableSize.size <= shared.dynamicTableSize.maximum, "the table outgrew its maximum")
    // A decoder that remembers blocks reads exactly what one without memory reads: the same
    // block again, and one that starts like an earlier one and then goes its own way.
    var remembering = HPACKDecoder(maximumTableSize: 4096, maximumHeaderListSize: 8192)
    var plain = HPACKDecoder(maximumTableSize: 4096, maximumHeaderListSize: 8192)
    plain.remembersBlocks = false
    for (index, block) in [bytes, bytes, Array(bytes.prefix(bytes.count / 2)) + bytes.reversed(), bytes].enumerated() {
        // Before the third block, the input's last byte may change the list limit or lower the
        // table size (which the peer must then announce), on both decoders alike.
        if index == 2, let last = bytes.last {
            switch last % 4 {
            case 0: remembering.maximumHeaderListSize = 64; plain.maximumHeaderListSize = 64
            case 1: remembering.setMaximumTableSize(0); plain.setMaximumTableSize(0)
            default: break
            }
        }
        let withMemory = Result { () throws(HPACKError) in try remembering.decode(block) }
        let without = Result { () throws(HPACKError) in try plain.decode(block) }
        switch (withMemory, without) {
        case let (.success(a), .success(b)): precondition(a.readsAlike(b), "the remembering decoder read another list")
        case let (.failure(a), .failure(b)): precondition("\(a)" == "\(b)", "the decoders failed differently")
        default: preconditionFailure("one decoder failed and the other did not")
        }
    }
}

private func fuzzConnection(_ bytes: [UInt8]) {
    guard !bytes.isEmpty else { return }
    let cuts = bytes.prefix(3).map { Int($0) * bytes.count / 256 }.sorted() + [bytes.count]
    var configuration = HTTP2ConnectionConfiguration()
    configuration.maxConcurrentStreams = 8
    configuration.initialStreamWindowSize = 1000
    for role in [HTTP2Connection.Role.server, .client] {
        var connection = HTTP2Connection(role: role, configuration: configuration)
        _ = connection.takeOutput()
        var hello = role == .server ? HTTP2ConnectionPreface.bytes : []
        HTTP2FrameEncoder.write(HTTP2Frame(streamID: 0, payload: .settings([], ack: false)), into: &hello)
        _ = connection.receive(hello)
        if role == .client {
            // Something for the server's frames to refer to.
            _ = try? connection.openStream(headers: [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", "/f")])
        }
        var from = 0
        var failed = false
        // An odd first byte: the server starts a graceful shutdown after the first read, so
        // the wait for its PING's answer meets whatever follows.
        let shutsDown = role == .server && bytes[0] & 1 == 1
        var lastAnnounced = UInt32.max
        let start = ContinuousClock.now
        for (index, cut) in cuts.enumerated() {
            let events = connection.receive(Array(bytes[from..<cut]), at: start)
            if events.contains(where: { if case .connectionFailed = $0 { return true } else { return false } }) { failed = true }
            if shutsDown, index == 0 { connection.beginGracefulShutdown() }
            let output = connection.takeOutput()
            let frames = try? Array(decodeAll(output))
            for case let .goAway(last, _, _) in (frames ?? []).map(\.payload) {
                precondition(last <= lastAnnounced, "a GOAWAY raised the last stream id")
                lastAnnounced = last
            }
            if failed, let frames {
                precondition(frames.last.map { if case .goAway = $0.payload { return true } else { return false } } ?? false,
                             "a failed connection did not end with GOAWAY")
                failed = false
            }
            precondition(connection.frameDecoder.bufferedByteCount <= 9 + 16_384, "more than one frame buffered")
            precondition(connection.streams.count <= 9, "more streams than allowed")
            from = cut
        }
    }
}

private func decodeAll(_ bytes: [UInt8]) throws -> [HTTP2Frame] {
    var decoder = HTTP2FrameDecoder(maxFrameSize: HTTP2FrameLimits.maximumMaxFrameSize, expectsPreface: false)
    decoder.append(bytes)
    var frames: [HTTP2Frame] = []
    while let frame = try decoder.nextFrame() { frames.append(frame) }
    return frames
}
