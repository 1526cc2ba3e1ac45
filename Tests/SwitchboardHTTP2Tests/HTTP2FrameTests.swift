import Foundation
import PeerSupport
@testable import SwitchboardHTTP2
import Testing

/// The frame layer alone: every type written and read back, padding, split input, and the
/// size and stream-id rules of RFC 9113 §4 and §6, each failing with its code.
@Suite struct HTTP2FrameTests {
    static let everyType: [HTTP2Frame] = [
        HTTP2Frame(streamID: 1, payload: .data([1, 2, 3], endStream: true, flowControlledLength: 3)),
        HTTP2Frame(streamID: 3, payload: .data([], endStream: false, flowControlledLength: 0)),
        HTTP2Frame(streamID: 5, payload: .headers(fragment: [0x82, 0x86], endStream: false, endHeaders: false)),
        HTTP2Frame(streamID: 5, payload: .continuation(fragment: [0x84], endHeaders: true)),
        HTTP2Frame(streamID: 7, payload: .priority),
        HTTP2Frame(streamID: 9, payload: .rstStream(.cancel)),
        HTTP2Frame(streamID: 0, payload: .settings([HTTP2Setting(.maxConcurrentStreams, 7), HTTP2Setting(HTTP2SettingID(rawValue: 0x99), 1)], ack: false)),
        HTTP2Frame(streamID: 0, payload: .settings([], ack: true)),
        HTTP2Frame(streamID: 11, payload: .pushPromise(promisedStreamID: 2, fragment: [0x88], endHeaders: true)),
        HTTP2Frame(streamID: 0, payload: .ping(0x0102_0304_0506_0708, ack: false)),
        HTTP2Frame(streamID: 0, payload: .ping(42, ack: true)),
        HTTP2Frame(streamID: 0, payload: .goAway(lastStreamID: 13, code: HTTP2ErrorCode(rawValue: 0xabc), debugData: Array("bye".utf8))),
        HTTP2Frame(streamID: 0, payload: .windowUpdate(increment: 0x7fff_ffff)),
        HTTP2Frame(streamID: 15, payload: .windowUpdate(increment: 1)),
        HTTP2Frame(streamID: 17, payload: .unknown(type: 0xfa, length: 4)),
    ]

    static func frames(in bytes: [UInt8], maxFrameSize: UInt32 = 16_384, preface: Bool = false) throws(HTTP2ProtocolViolation) -> [HTTP2Frame] {
        var decoder = HTTP2FrameDecoder(maxFrameSize: maxFrameSize, expectsPreface: preface)
        decoder.append(bytes)
        var frames: [HTTP2Frame] = []
        while let frame = try decoder.nextFrame() { frames.append(frame) }
        return frames
    }

    static func violation(_ bytes: [UInt8], preface: Bool = false) -> HTTP2ProtocolViolation? {
        do {
            _ = try frames(in: bytes, preface: preface)
            return nil
        } catch {
            return error
        }
    }

    @Test func everyFrameTypeRoundTrips() throws {
        var bytes: [UInt8] = []
        for frame in Self.everyType { HTTP2FrameEncoder.write(frame, into: &bytes) }
        #expect(try Self.frames(in: bytes) == Self.everyType)
    }

    @Test func bytesArrivingOneAtATimeMakeTheSameFrames() throws {
        var bytes = HTTP2ConnectionPreface.bytes
        for frame in Self.everyType { HTTP2FrameEncoder.write(frame, into: &bytes) }
        var decoder = HTTP2FrameDecoder(expectsPreface: true)
        var frames: [HTTP2Frame] = []
        for byte in bytes {
            decoder.append([byte])
            while let frame = try decoder.nextFrame() { frames.append(frame) }
        }
        #expect(frames == Self.everyType)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func paddingIsStrippedButCountsForFlowControl() throws {
        // DATA, PADDED|END_STREAM, pad length 3, "hi", three zero octets.
        let data: [UInt8] = [0, 0, 6, 0x0, 0x9, 0, 0, 0, 1, 3, 0x68, 0x69, 0, 0, 0]
        #expect(try Self.frames(in: data) == [HTTP2Frame(streamID: 1, payload: .data(ArraySlice("hi".utf8), endStream: true, flowControlledLength: 6))])
        // HEADERS, PADDED|PRIORITY|END_HEADERS: pad 1, dependency 0 weight 16, block 0x82, pad.
        let headers: [UInt8] = [0, 0, 8, 0x1, 0x2C, 0, 0, 0, 3, 1, 0, 0, 0, 0, 15, 0x82, 0]
        #expect(try Self.frames(in: headers) == [HTTP2Frame(streamID: 3, payload: .headers(fragment: [0x82], endStream: false, endHeaders: true))])
    }

    @Test func theReservedBitOfAStreamIDIsIgnored() throws {
        let frame: [UInt8] = [0, 0, 4, 0x8, 0, 0x80, 0, 0, 1, 0, 0, 0, 9]
        #expect(try Self.frames(in: frame) == [HTTP2Frame(streamID: 1, payload: .windowUpdate(increment: 9))])
    }

    @Test func aFrameLongerThanAdvertisedFailsBeforeItsPayloadIsHeld() throws {
        var decoder = HTTP2FrameDecoder(expectsPreface: false)
        // A header that announces 16 MiB; none of it is sent or buffered.
        decoder.append([0xff, 0xff, 0xff, 0x0, 0, 0, 0, 0, 1])
        #expect(throws: HTTP2ProtocolViolation.self) { try decoder.nextFrame() }
        #expect(decoder.bufferedByteCount == 9)
        // Exactly MAX_FRAME_SIZE is fine.
        var big: [UInt8] = []
        HTTP2FrameEncoder.writeData(ArraySlice(repeating: 7, count: 16_384), streamID: 1, endStream: false, into: &big)
        #expect(try Self.frames(in: big).count == 1)
        big = []
        HTTP2FrameEncoder.writeData(ArraySlice(repeating: 7, count: 16_385), streamID: 1, endStream: false, into: &big)
        #expect(Self.violation(big)?.code == .frameSizeError)
    }

    @Test func rulesOfEachFrameTypeFailWithTheirCode() {
        func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: [UInt8]) -> [UInt8] {
            var bytes: [UInt8] = []
            HTTP2FrameEncoder.writeHeader(length: payload.count, type: HTTP2FrameType(rawValue: type), flags: flags, streamID: stream, into: &bytes)
            return bytes + payload
        }
        let cases: [(String, [UInt8], HTTP2ErrorCode)] = [
            ("DATA on stream 0", frame(0, stream: 0, [1]), .protocolError),
            ("HEADERS on stream 0", frame(1, flags: 4, stream: 0, [0x82]), .protocolError),
            ("padding as long as the payload", frame(0, flags: 8, stream: 1, [2, 0]), .protocolError),
            ("padded with no pad length", frame(0, flags: 8, stream: 1, []), .frameSizeError),
            ("HEADERS depending on itself", frame(1, flags: 0x24, stream: 3, [0, 0, 0, 3, 15, 0x82]), .protocolError),
            ("HEADERS too short for priority", frame(1, flags: 0x24, stream: 3, [0, 0]), .frameSizeError),
            ("PRIORITY of 4 bytes", frame(2, stream: 1, [0, 0, 0, 0]), .frameSizeError),
            ("PRIORITY on itself", frame(2, stream: 1, [0, 0, 0, 1, 15]), .protocolError),
            ("RST_STREAM of 3 bytes", frame(3, stream: 1, [0, 0, 0]), .frameSizeError),
            ("RST_STREAM on stream 0", frame(3, stream: 0, [0, 0, 0, 8]), .protocolError),
            ("SETTINGS on stream 1", frame(4, stream: 1, []), .protocolError),
            ("SETTINGS of 5 bytes", frame(4, stream: 0, [0, 3, 0, 0, 1]), .frameSizeError),
            ("SETTINGS ack with a payload", frame(4, flags: 1, stream: 0, [0, 3, 0, 0, 0, 1]), .frameSizeError),
            ("PUSH_PROMISE too short", frame(5, flags: 4, stream: 1, [0, 0]), .frameSizeError),
            ("PING of 7 bytes", frame(6, stream: 0, [0, 0, 0, 0, 0, 0, 0]), .frameSizeError),
            ("PING on stream 1", frame(6, stream: 1, [0, 0, 0, 0, 0, 0, 0, 0]), .protocolError),
            ("GOAWAY of 7 bytes", frame(7, stream: 0, [0, 0, 0, 0, 0, 0, 0]), .frameSizeError),
            ("GOAWAY on stream 1", frame(7, stream: 1, [0, 0, 0, 0, 0, 0, 0, 0]), .protocolError),
            ("WINDOW_UPDATE of 3 bytes", frame(8, stream: 0, [0, 0, 1]), .frameSizeError),
            ("CONTINUATION on stream 0", frame(9, stream: 0, []), .protocolError),
        ]
        for (name, bytes, code) in cases {
            #expect(Self.violation(bytes)?.code == code, "\(name)")
        }
    }

    @Test func aServerWantsThePrefaceFirst() throws {
        #expect(Self.violation(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), preface: true)?.code == .protocolError)
        // A prefix of the preface just waits for more.
        #expect(try Self.frames(in: Array(HTTP2ConnectionPreface.bytes.prefix(10)), preface: true).isEmpty)
    }

    @Test func aHeaderBlockIsSplitIntoContinuationsAtTheFrameSize() throws {
        let block = (0..<40_000).map { UInt8(truncatingIfNeeded: $0) }
        var bytes: [UInt8] = []
        HTTP2FrameEncoder.writeHeaderBlock(block, streamID: 1, endStream: true, maxFrameSize: 16_384, into: &bytes)
        let frames = try Self.frames(in: bytes)
        #expect(frames.count == 3)
        guard case let .headers(first, endStream, endHeaders) = frames[0].payload,
              case let .continuation(second, secondEnds) = frames[1].payload,
              case let .continuation(third, thirdEnds) = frames[2].payload else {
            Issue.record("expected HEADERS, CONTINUATION, CONTINUATION: \(frames.map(\.type))")
            return
        }
        #expect(endStream && !endHeaders && !secondEnds && thirdEnds)
        #expect(Array(first + second + third) == block)
    }

    @Test func randomBytesNeverCrashTheDecoder() {
        var random = SeededGenerator(seed: 0x5EED000C)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            var decoder = HTTP2FrameDecoder(expectsPreface: false)
            decoder.append(bytes)
            var count = 0
            while count < 100, (try? decoder.nextFrame()) != nil { count += 1 }
            #expect(decoder.bufferedByteCount <= bytes.count)
        }
    }
}
