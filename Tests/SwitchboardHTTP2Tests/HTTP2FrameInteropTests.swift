import Foundation
import PeerSupport
@testable import SwitchboardHTTP2
import Testing

/// Frames against Python's `hyperframe` (python-hyper), which nobody here wrote: it reads
/// what we write, and we read what it writes, padding and all.
@Suite(.timeLimit(.minutes(3)))
struct HTTP2FrameInteropTests {
    struct Answer: Decodable {
        struct Described: Decodable, Equatable {
            var type: String
            var stream: UInt32
            var flags: [String]
            var data: String?
            var flow: Int?
            var code: UInt32?
            var settings: [[UInt32]]?
            var last: UInt32?
            var increment: UInt32?
        }

        var parsed: [Described]
        var serialized: String
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func hyperframeAndWeReadEachOthersFrames() async throws {
        let ours: [HTTP2Frame] = [
            HTTP2Frame(streamID: 1, payload: .data(ArraySlice("hello".utf8), endStream: true, flowControlledLength: 5)),
            HTTP2Frame(streamID: 3, payload: .headers(fragment: [0x82, 0x86, 0x84], endStream: true, endHeaders: false)),
            HTTP2Frame(streamID: 3, payload: .continuation(fragment: [0x41, 0x01, 0x61], endHeaders: true)),
            HTTP2Frame(streamID: 5, payload: .rstStream(.refusedStream)),
            HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.enablePush, 0), HTTP2Setting(.initialWindowSize, 1 << 20)], ack: false)),
            HTTP2Frame(streamID: 0, payload: .settings([], ack: true)),
            HTTP2Frame(streamID: 0, payload: .ping(0x1122_3344_5566_7788, ack: true)),
            HTTP2Frame(streamID: 0, payload: .goAway(lastStreamID: 7, code: .enhanceYourCalm, debugData: Array("calm".utf8))),
            HTTP2Frame(streamID: 9, payload: .windowUpdate(increment: 65_535)),
        ]
        var bytes: [UInt8] = []
        for frame in ours { HTTP2FrameEncoder.write(frame, into: &bytes) }
        let theirs: [[String: Any]] = [
            ["type": "DATA", "stream": 1, "data": "6869", "pad": 3, "flags": ["END_STREAM"]],
            ["type": "HEADERS", "stream": 3, "data": "8286", "flags": ["END_HEADERS"]],
            ["type": "PRIORITY", "stream": 5, "depends": 3],
            ["type": "RSTSTREAM", "stream": 5, "code": 8],
            ["type": "SETTINGS", "stream": 0, "settings": [[3, 100], [5, 32768]]],
            ["type": "PING", "stream": 0, "data": "0000000000000001"],
            ["type": "GOAWAY", "stream": 0, "last": 3, "code": 0],
            ["type": "WINDOWUPDATE", "stream": 0, "increment": 1000],
        ]
        let job: [String: Any] = ["parse": Self.hex(bytes), "frames": theirs]
        let jobURL = try ScratchDirectory.make("hyperframe").appendingPathComponent("job.json")
        try JSONSerialization.data(withJSONObject: job).write(to: jobURL)
        let peer = try PythonPeer(script: "hyperframe_peer.py", arguments: [jobURL.path])
        let result = await peer.finishAsync(timeout: 30)
        try #require(result.status == 0, "\(result.output)")
        let answer = try JSONDecoder().decode(Answer.self, from: Data(result.output.utf8))

        typealias D = Answer.Described
        #expect(answer.parsed == [
            D(type: "DATA", stream: 1, flags: ["END_STREAM"], data: Self.hex(Array("hello".utf8)), flow: 5),
            D(type: "HEADERS", stream: 3, flags: ["END_STREAM"], data: "828684"),
            D(type: "CONTINUATION", stream: 3, flags: ["END_HEADERS"], data: "410161"),
            D(type: "RSTSTREAM", stream: 5, flags: [], code: 7),
            D(type: "SETTINGS", stream: 0, flags: [], settings: [[2, 0], [4, 1 << 20]]),
            D(type: "SETTINGS", stream: 0, flags: ["ACK"], settings: []),
            D(type: "PING", stream: 0, flags: ["ACK"], data: "1122334455667788"),
            D(type: "GOAWAY", stream: 0, flags: [], data: Self.hex(Array("calm".utf8)), code: 11, last: 7),
            D(type: "WINDOWUPDATE", stream: 9, flags: [], increment: 65_535),
        ])
        let parsed = try HTTP2FrameTests.frames(in: HPACKVectorTests.bytes(answer.serialized))
        #expect(parsed == [
            HTTP2Frame(streamID: 1, payload: .data(ArraySlice("hi".utf8), endStream: true, flowControlledLength: 6)),
            HTTP2Frame(streamID: 3, payload: .headers(fragment: [0x82, 0x86], endStream: false, endHeaders: true)),
            HTTP2Frame(streamID: 5, payload: .priority),
            HTTP2Frame(streamID: 5, payload: .rstStream(.cancel)),
            HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.maxConcurrentStreams, 100), HTTP2Setting(.maxFrameSize, 32768)], ack: false)),
            HTTP2Frame(streamID: 0, payload: .ping(1, ack: false)),
            HTTP2Frame(streamID: 0, payload: .goAway(lastStreamID: 3, code: .noError, debugData: [])),
            HTTP2Frame(streamID: 0, payload: .windowUpdate(increment: 1000)),
        ])
    }
}
