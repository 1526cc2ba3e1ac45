import PeerSupport
import SwitchboardGRPC
import Testing

/// The length-prefixed message framing, fed the way DATA frames arrive: whole, split at any
/// byte, several messages at once, and broken.
@Suite struct GRPCMessageDeframerTests {
    let first: [UInt8] = Array(0..<40)
    let second: [UInt8] = Array(100..<103)

    @Test func aMessageSplitAtEveryByteComesOutWholeOnce() throws {
        let stream = GRPCMessageFramer.frame(first) + GRPCMessageFramer.frame(second)
        for cut in 0...stream.count {
            var deframer = GRPCMessageDeframer(maximumMessageSize: 1024)
            var messages = try deframer.append(Array(stream[..<cut]))
            messages += try deframer.append(Array(stream[cut...]))
            #expect(messages == [first, second], "cut at \(cut)")
            try deframer.finish()
        }
    }

    @Test func emptyMessagesAndManyPerChunk() throws {
        var deframer = GRPCMessageDeframer(maximumMessageSize: 1024)
        let chunk = GRPCMessageFramer.frame([]) + GRPCMessageFramer.frame(first) + GRPCMessageFramer.frame([])
        #expect(try deframer.append(chunk) == [[], first, []])
        // A leftover prefix, then the rest with a further message behind it.
        let next = GRPCMessageFramer.frame(second) + GRPCMessageFramer.frame(first)
        #expect(try deframer.append(Array(next[..<2])) == [])
        #expect(try deframer.append(Array(next[2...])) == [second, first])
        try deframer.finish()
    }

    @Test func brokenInputGetsItsTypedError() throws {
        var small = GRPCMessageDeframer(maximumMessageSize: 10)
        #expect(throws: GRPCFramingError.messageTooLarge(length: 40, maximum: 10)) { try small.append(GRPCMessageFramer.frame(first)) }

        var compressed = GRPCMessageDeframer(maximumMessageSize: 1024)
        #expect(throws: GRPCFramingError.unexpectedCompression) { try compressed.append([1, 0, 0, 0, 1, 7]) }

        var cut = GRPCMessageDeframer(maximumMessageSize: 1024)
        _ = try cut.append(Array(GRPCMessageFramer.frame(first).dropLast(3)))
        #expect(throws: GRPCFramingError.truncated(missing: 3)) { try cut.finish() }
    }

    /// DATA bytes come as slices of the connection's read buffer, which start anywhere: random
    /// messages cut at random points, each piece a slice deep inside a larger array.
    @Test func slicesAtAnyOffsetGiveTheSameMessages() throws {
        var generator = SeededGenerator(seed: 0x5EED000A)
        for round in 0..<300 {
            let messages = (0..<Int.random(in: 0...6, using: &generator)).map { _ in
                (0..<Int.random(in: 0...70, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            }
            let stream = messages.flatMap { GRPCMessageFramer.frame($0) }
            var deframer = GRPCMessageDeframer(maximumMessageSize: 100)
            var received: [[UInt8]] = []
            var offset = 0
            while offset < stream.count {
                let end = min(stream.count, offset + Int.random(in: 1...40, using: &generator))
                let padding = Int.random(in: 0...9, using: &generator)
                let carrier = [UInt8](repeating: 0xee, count: padding) + stream[offset..<end] + [0xee]
                try deframer.append(carrier[padding..<carrier.count - 1]) { (message: ArraySlice<UInt8>) throws(GRPCFramingError) in
                    received.append(Array(message))
                }
                offset = end
            }
            #expect(received == messages, "round \(round)")
            try deframer.finish()
        }
    }

    /// Once `append` returns, the deframer keeps no reference to the bytes it was given (the
    /// connection's read buffer): a leftover partial message is copied, so the buffer's next
    /// write does not have to copy it. Seen through copy-on-write: a write to a buffer nobody
    /// else holds keeps its storage.
    @Test func keepsNoReferenceToTheBytesGiven() throws {
        let whole = GRPCMessageFramer.frame(first) + GRPCMessageFramer.frame(second)
        for cut in [whole.count, whole.count - 2, 3, 45 + 2] {
            var deframer = GRPCMessageDeframer(maximumMessageSize: 1024)
            var buffer = [UInt8](repeating: 0, count: 8) + whole[..<cut]
            var received: [[UInt8]] = []
            try deframer.append(buffer[8...]) { (message: ArraySlice<UInt8>) throws(GRPCFramingError) in received.append(Array(message)) }
            let before = buffer.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
            buffer[0] = 1
            let after = buffer.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
            #expect(before == after, "cut at \(cut): the deframer still held the buffer")
            // What was left is still there, as the deframer's own copy.
            try deframer.append(whole[cut...]) { (message: ArraySlice<UInt8>) throws(GRPCFramingError) in received.append(Array(message)) }
            #expect(received == [first, second], "cut at \(cut)")
            try deframer.finish()
        }
    }
}
