import PeerSupport
@testable import SwitchboardHTTP2
import Testing

/// The encoder copies the bytes of lists it wrote before, and the decoder reuses the fields of
/// blocks it read before, while the dynamic table is unchanged: what they produce must be what
/// they would produce without that memory, whatever the table and the limits do.
@Suite struct HPACKBlockMemoryTests {
    static let response = [HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")]

    /// The storage of a list's elements, to see whether two lists are one.
    static func storage(_ headers: [HPACKHeader]) -> UnsafeRawPointer? {
        headers.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    @Test func aRepeatedListIsCopiedWholeAndReadBackAsTheSameList() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        var previousBlock: [UInt8] = []
        var previousList: [HPACKHeader] = []
        for round in 0..<5 {
            var block: [UInt8] = []
            encoder.encode(Self.response, into: &block)
            let decoded = try decoder.decode(block)
            #expect(decoded.headers == Self.response)
            // Round 0 adds `content-type` to the table; round 1 refers to it and is remembered;
            // from round 2 on both sides take the whole list from memory.
            if round >= 2 {
                #expect(block == previousBlock)
                #expect(encoder.fieldsCopiedFromEarlierBlocks == 2 * (round - 1))
                #expect(decoder.fieldsReusedFromEarlierBlocks == 2 * (round - 1))
                #expect(Self.storage(decoded.headers) == Self.storage(previousList), "the very list read before")
            } else {
                #expect(encoder.fieldsCopiedFromEarlierBlocks == 0 && decoder.fieldsReusedFromEarlierBlocks == 0)
            }
            previousBlock = block
            previousList = decoded.headers
        }
    }

    /// A client's request differs from the last only in its deadline and what follows: the
    /// fields before it come from memory, the rest is written and read as usual.
    @Test func aRequestSharingItsFirstFieldsReusesOnlyThose() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let lead = [HPACKHeader(":method", "POST"), HPACKHeader(":path", "/chat.Messages/SendMessage"),
                    HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers")]
        let authorization = HPACKHeader("authorization", "Basic YWxpY2U6c2VjcmV0", indexing: .never)
        var copied = 0, reused = 0
        for round in 0..<6 {
            let headers = lead + [HPACKHeader("grpc-timeout", "\(900 + round)m", indexing: .never), authorization]
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            #expect(try decoder.decode(block).headers == headers)
            if round >= 2 {
                #expect(encoder.fieldsCopiedFromEarlierBlocks == copied + lead.count)
                #expect(decoder.fieldsReusedFromEarlierBlocks == reused + lead.count)
            }
            copied = encoder.fieldsCopiedFromEarlierBlocks
            reused = decoder.fieldsReusedFromEarlierBlocks
        }
        #expect(copied == 4 * lead.count && reused == 4 * lead.count)
    }

    /// A remembered block's literals are checked once: a never-indexed `authorization` it
    /// shares with later requests comes marked clean, so the connection does not check its
    /// characters on every request. A deadline read anew is not marked; nor is anything in a
    /// block holding text that was not UTF-8.
    @Test func sharedLiteralsComeCheckedFromMemory() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        let lead = [HPACKHeader(":method", "POST"), HPACKHeader(":path", "/chat.Messages/SendMessage"),
                    HPACKHeader("authorization", "Basic YWxpY2U6c2VjcmV0", indexing: .never)]
        for round in 0..<5 {
            let headers = lead + [HPACKHeader("grpc-timeout", "\(900 + round)m", indexing: .never)]
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            let decoded = try decoder.decode(block)
            #expect(decoded.headers == headers)
            let authorizationChecked = decoded.checkedFields & (1 << 2) != 0
            // Round 0 adds `:path` to the table; round 1 is remembered; later rounds share it.
            #expect(authorizationChecked == (round >= 2), "round \(round)")
            #expect(decoded.checkedFields & (1 << 3) == 0, "round \(round): the deadline was read anew")
        }
        var unclean = HPACKDecoder.Block(headers: [HPACKHeader("x-a", "b"), HPACKHeader("x-c", "d\u{FFFD}")], listSize: 0, isTooLarge: false,
                                         hasInvalidText: false)
        #expect(DecodedBlockMemory.cleanFields(of: unclean) == 0b11)
        unclean.hasInvalidText = true
        #expect(DecodedBlockMemory.cleanFields(of: unclean) == 0)
        let dirty = HPACKDecoder.Block(headers: [HPACKHeader("x-a", " padded"), HPACKHeader("Upper", "v"), HPACKHeader("x-b", "ok")],
                                       listSize: 0, isTooLarge: false, hasInvalidText: false)
        #expect(DecodedBlockMemory.cleanFields(of: dirty) == 0b100)
    }

    /// Lists drawn from a pool (the same strings, equal strings stored apart, fields that go
    /// into the table and secrets that never do), over a small table that keeps evicting, with
    /// the peer's table size and the list limit changing now and then: the decoder with memory
    /// gives exactly what one without gives (fields, sizes, flags), and both the sent list.
    @Test func withAndWithoutMemoryEveryBlockReadsAlike() throws {
        var generator = SeededGenerator(seed: 23)
        let pool = (0..<12).map { index -> HPACKHeader in
            switch index % 4 {
            case 0: HPACKHeader("x-field-\(index)", "a value long enough to be stored apart \(index)")
            case 1: HPACKHeader(":path", "/service.Name/Method\(index % 3)")
            case 2: HPACKHeader("authorization", "Bearer token-number-\(index)", indexing: .never)
            default: HPACKHeader("grpc-timeout", "\(index)m")
            }
        }
        var encoder = HPACKEncoder(tableSizeCap: 400)
        var remembering = HPACKDecoder(maximumTableSize: 400)
        var plain = HPACKDecoder(maximumTableSize: 400)
        plain.remembersBlocks = false
        encoder.setPeerMaximumTableSize(400)
        var previous: [HPACKHeader] = []
        for step in 0..<4000 {
            var headers: [HPACKHeader]
            switch generator.next() % 4 {
            case 0:
                // The last list again, perhaps with its last field changed.
                headers = previous.isEmpty ? [pool[0]] : previous
                if generator.next() % 2 == 0 { headers[headers.count - 1] = pool[Int(generator.next() % UInt64(pool.count))] }
            case 1:
                // The same text in new storage: equal, but not the same representation.
                headers = previous.map { HPACKHeader(String(decoding: Array($0.name.utf8), as: UTF8.self),
                                                     String(decoding: Array($0.value.utf8), as: UTF8.self), indexing: $0.indexing) }
                if headers.isEmpty { headers = [pool[1]] }
            default:
                headers = (0..<Int(generator.next() % 6 + 1)).map { _ in pool[Int(generator.next() % UInt64(pool.count))] }
            }
            if step % 500 == 499 {
                let size = [0, 120, 400][Int(generator.next() % 3)]
                encoder.setPeerMaximumTableSize(size)
            }
            if step % 300 == 299 {
                let limit = [200, 16 * 1024][Int(generator.next() % 2)]
                remembering.maximumHeaderListSize = limit
                plain.maximumHeaderListSize = limit
            }
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            let withMemory = try remembering.decode(block)
            let without = try plain.decode(block)
            #expect(withMemory.readsAlike(without), "\(withMemory) / \(without)")
            if !without.isTooLarge { #expect(withMemory.headers == headers) }
            #expect(remembering.dynamicTableSize == plain.dynamicTableSize)
            #expect(encoder.dynamicTableSize.size == plain.dynamicTableSize.size)
            previous = headers
        }
        // Not a vacuous comparison: both memories served many fields.
        #expect(encoder.fieldsCopiedFromEarlierBlocks > 1000)
        #expect(remembering.fieldsReusedFromEarlierBlocks > 1000)
    }

    /// Blocks that share their start with a remembered one and then go wrong (a byte changed,
    /// cut short, text that is not UTF-8): the decoder with memory fails or succeeds exactly
    /// as one without does.
    @Test func damagedBlocksAfterARememberedStartReadAlike() throws {
        var encoder = HPACKEncoder(huffman: .never)
        let lists = [
            [HPACKHeader(":method", "POST"), HPACKHeader(":path", "/a.B/C"), HPACKHeader("x-name", "first value"), HPACKHeader("x-other", "second")],
            [HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc"), HPACKHeader("grpc-status", "0")],
        ]
        // The warm-up: each list twice, so the second block of each refers only to the table.
        var warmUp: [[UInt8]] = []
        for _ in 0..<2 {
            for list in lists {
                var block: [UInt8] = []
                encoder.encode(list, into: &block)
                warmUp.append(block)
            }
        }
        var generator = SeededGenerator(seed: 5)
        var reused = 0
        for trial in 0..<3000 {
            var remembering = HPACKDecoder()
            var plain = HPACKDecoder()
            plain.remembersBlocks = false
            for block in warmUp {
                _ = try remembering.decode(block)
                _ = try plain.decode(block)
            }
            // A remembered block with a literal field added, then damaged.
            var block = warmUp[2 + trial % 2]
            block += [0x00, 0x05] + Array("x-new".utf8) + [0x03] + Array("abc".utf8)
            let position = Int(generator.next() % UInt64(block.count))
            switch generator.next() % 3 {
            case 0: block[position] = UInt8(truncatingIfNeeded: generator.next())
            case 1: block.removeLast(block.count - position)
            default: block[block.count - 1] = 0xFF
            }
            let limit = [64, 16 * 1024][Int(generator.next() % 2)]
            remembering.maximumHeaderListSize = limit
            plain.maximumHeaderListSize = limit
            let withMemory = Result { () throws(HPACKError) in try remembering.decode(block) }
            let without = Result { () throws(HPACKError) in try plain.decode(block) }
            switch (withMemory, without) {
            case let (.success(a), .success(b)): #expect(a.readsAlike(b), "\(a) / \(b)")
            case let (.failure(a), .failure(b)): #expect("\(a)" == "\(b)")
            default: Issue.record("one decoder failed and the other did not: \(withMemory) / \(without)")
            }
            reused = max(reused, remembering.fieldsReusedFromEarlierBlocks)
        }
        #expect(reused > 0)
    }

    /// A list is remembered only while the table is as it was: a block that adds an entry
    /// moves the indices, and a list written before must be written again, not copied.
    @Test func aChangedTableIsNeverReadThroughOldBlocks() throws {
        var encoder = HPACKEncoder()
        var decoder = HPACKDecoder()
        for _ in 0..<3 {
            var block: [UInt8] = []
            encoder.encode(Self.response, into: &block)
            #expect(try decoder.decode(block).headers == Self.response)
        }
        let copied = encoder.fieldsCopiedFromEarlierBlocks
        var block: [UInt8] = []
        encoder.encode([HPACKHeader("x-new", "added to the table")], into: &block)
        #expect(block.first == 0x40, "a literal added to the table, \(block)")
        _ = try decoder.decode(block)
        block = []
        encoder.encode(Self.response, into: &block)
        #expect(encoder.fieldsCopiedFromEarlierBlocks == copied, "written again after the table changed")
        // `content-type` moved one place down the table: 62 became 63.
        #expect(block == [0x88, 0xBF] as [UInt8])
        #expect(try decoder.decode(block).headers == Self.response)
    }

    /// A block read before is not taken from memory when the table must first be shrunk: the
    /// peer has to announce the new size (RFC 7541 §4.2), whole block or shared start alike.
    @Test func aRequiredTableSizeUpdateIsNeverSkippedByMemory() throws {
        var decoder = HPACKDecoder()
        for _ in 0..<2 { #expect(try decoder.decode([0x82]).headers == [HPACKHeader(":method", "GET")]) }
        #expect(decoder.fieldsReusedFromEarlierBlocks == 1, "remembered and served whole")
        decoder.setMaximumTableSize(0)
        for block: [UInt8] in [[0x82], [0x82, 0x84]] {
            #expect(throws: HPACKError.missingTableSizeUpdate) { try decoder.decode(block) }
        }
        #expect(try decoder.decode([0x20, 0x82]).headers == [HPACKHeader(":method", "GET")])
    }

    /// A list found valid as a response is still checked as trailers (where `:status` is
    /// malformed), and a list that failed is checked again every time.
    @Test func validListsAreRememberedByKind() throws {
        var lists = ValidatedHeaderLists()
        _ = try lists.validate(Self.response, as: .response, checked: 0)
        #expect(throws: HTTP2ProtocolViolation.self) { try lists.validate(Self.response, as: .trailers, checked: 0) }
        #expect(lists.hits == 0)
        _ = try lists.validate(Self.response, as: .response, checked: 0)
        #expect(lists.hits == 1)
        let informational = [HPACKHeader(":status", "103")]
        #expect(try lists.validate(informational, as: .response, checked: 0).isInformational)
        #expect(try lists.validate(informational, as: .response, checked: 0).isInformational, "the summary is remembered too")
        let malformed = [HPACKHeader(":status", "200"), HPACKHeader("Upper", "x")]
        for _ in 0..<2 {
            #expect(throws: HTTP2ProtocolViolation.self) { try lists.validate(malformed, as: .response, checked: 0) }
        }
        #expect(lists.hits == 2)
        // The same text in another list is checked on its own.
        let copy = Self.response.map { HPACKHeader($0.name, $0.value) }
        _ = try lists.validate(copy, as: .response, checked: 0)
        #expect(lists.hits == 2)
        // What the check found comes back with the list.
        let sized = [HPACKHeader(":status", "200"), HPACKHeader("content-length", "42")]
        #expect(try lists.validate(sized, as: .response, checked: 0).contentLength == 42)
        #expect(try lists.validate(sized, as: .response, checked: 0).contentLength == 42)
        #expect(lists.hits == 3)
        // Replaced by later lists (two are kept), `response` and `copy` are checked again.
        _ = try lists.validate(Self.response, as: .response, checked: 0)
        _ = try lists.validate(copy, as: .response, checked: 0)
        #expect(lists.hits == 3)
    }

    /// Calls on one connection: the client reads each answer's headers and trailers from
    /// memory and does not check them again, and every stream still gets its own events.
    @Test func aConnectionsRepeatedAnswersComeFromMemory() throws {
        var pair = ConnectionPair()
        pair.pump()
        for _ in 0..<6 {
            let id = try pair.client.openStream(headers: ConnectionPair.request)
            try pair.client.sendData([0, 0, 0, 0, 0], streamID: id, endStream: true)
            pair.pump()
            #expect(pair.serverEvents.contains(.headers(streamID: id, ConnectionPair.request, endStream: false)))
            try pair.server.sendHeaders(ConnectionPair.response, streamID: id, endStream: false)
            try pair.server.sendData([0, 0, 0, 0, 0], streamID: id, endStream: false)
            try pair.server.sendHeaders(ConnectionPair.trailers, streamID: id, endStream: true)
            pair.pump()
            #expect(pair.clientEvents.contains(.headers(streamID: id, ConnectionPair.response, endStream: false)))
            #expect(pair.clientEvents.contains(.headers(streamID: id, ConnectionPair.trailers, endStream: true)))
            #expect(pair.clientEvents.closure(of: id) == .completed)
        }
        #expect(pair.client.headerDecoder.fieldsReusedFromEarlierBlocks > 0)
        #expect(pair.client.validatedLists.hits > 0)
        #expect(pair.server.headerEncoder.fieldsCopiedFromEarlierBlocks > 0)
        #expect(pair.server.headerDecoder.fieldsReusedFromEarlierBlocks > 0)
    }
}
