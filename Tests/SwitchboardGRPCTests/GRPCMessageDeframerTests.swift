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
}
