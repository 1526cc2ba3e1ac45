import AllocationCounter
import Foundation
import KitchenSink
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import Testing

/// Decoding costs work linear in the input for every schema, even when a field repeats on
/// the wire and protobuf's merge rule makes each occurrence extend the one before.
///
/// Work is measured as the bytes of Swift heap objects the decoding thread allocates: a
/// merge that copied everything merged so far would allocate a quadratic amount, and the
/// count does not depend on time or on what else the machine is doing.
@Suite(.enabled(if: sb_allocation_counting_available() != 0, "allocations are counted with glibc, without sanitizers"))
struct LinearDecodingTests {
    /// A length-delimited field.
    static func field(_ number: Int, _ payload: [UInt8]) -> [UInt8] {
        var bytes = varint(UInt64(number << 3 | 2))
        bytes += varint(UInt64(payload.count))
        return bytes + payload
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value, bytes: [UInt8] = []
        while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
        return bytes + [UInt8(value)]
    }

    /// `count` copies of a message field, each adding one child to what the last built.
    static func repeatedMerges(field number: Int, count: Int, child: [UInt8]) -> Data {
        let one = field(number, child)
        var input: [UInt8] = []
        input.reserveCapacity(one.count * count)
        for _ in 0..<count { input += one }
        return Data(input)
    }

    /// TreeNode.children entry: a child named "a".
    static let treeChild = field(3, field(1, Array("a".utf8)))
    /// An unknown length-delimited field (number 99), kept by the message it lands in.
    static let unknownField = field(99, [1, 2, 3])

    /// Bytes allocated while decoding `input`.
    func allocated(_ decode: () throws -> Void) rethrows -> Int {
        sb_allocation_counting_begin()
        // Ends the count (and frees the turn) when `decode` throws too; a second end is a no-op.
        defer { _ = sb_allocation_counting_end() }
        try decode()
        return sb_allocation_counting_end()
    }

    /// Decoding twice the merges must cost about twice the work (quadratic would be four times).
    func expectLinear(_ label: String, _ decode: (Int) throws -> Void) throws {
        let small = try allocated { try decode(2000) }
        let large = try allocated { try decode(4000) }
        #expect(small > 0)
        let ratio = Double(large) / Double(max(small, 1))
        #expect(ratio < 2.6, "\(label): \(small) bytes for 2,000 merges, \(large) for 4,000 (ratio \(ratio))")
    }

    @Test func aOneofMessageMemberRepeated() throws {
        try expectLinear("TreeNode.next") { count in
            let node = try TreeNode(serializedBytes: Self.repeatedMerges(field: 4, count: count, child: Self.treeChild))
            guard case let .next(next)? = node.link else { Issue.record("no next"); return }
            #expect(next.children.count == count)
        }
    }

    @Test func aBoxedOptionalFieldRepeated() throws {
        try expectLinear("TreeNode.parent") { count in
            let node = try TreeNode(serializedBytes: Self.repeatedMerges(field: 2, count: count, child: Self.treeChild))
            #expect(node.parent?.children.count == count)
        }
    }

    @Test func aBoxedRequiredFieldRepeated() throws {
        try expectLinear("Owner.pet") { count in
            let owner = try Owner(serializedBytes: Self.repeatedMerges(field: 1, count: count, child: Self.unknownField))
            #expect(owner.pet.unknownFields.count == count * Self.unknownField.count)
        }
    }

    @Test func aNonOneofMessageMemberOfAOneofWithoutRecursion() throws {
        try expectLinear("Composite.point") { count in
            // Point has no list, so its unknown fields accumulate instead.
            let composite = try Composite(serializedBytes: Self.repeatedMerges(field: 10, count: count, child: Self.unknownField))
            guard case let .point(point)? = composite.payload else { Issue.record("no point"); return }
            #expect(point.unknownFields.count == count * Self.unknownField.count)
        }
    }

    @Test func manySmallPackedRuns() throws {
        try expectLinear("Lists.int32s") { count in
            // Each run is one packed element; the list grows across runs.
            var input: [UInt8] = []
            for index in 0..<count { input += Self.field(2, Self.varint(UInt64(index % 100))) }
            let lists = try Lists(serializedBytes: input)
            #expect(lists.int32s.count == count)
        }
    }

    static let schema = SchemaCompiler.compile(
        directory: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Schemas/kitchen_sink")).schema!

    @Test func theDynamicCodecMergesInPlace() throws {
        let codec = DynamicBinaryCodec(schema: Self.schema)
        let treeNode = try #require(Self.schema.messageIndex(named: "TreeNode"))
        let maps = try #require(Self.schema.messageIndex(named: "Maps"))
        try expectLinear("dynamic TreeNode.parent") { count in
            let node = try codec.decode(Self.repeatedMerges(field: 2, count: count, child: Self.treeChild), as: treeNode)
            guard case let .single(.message(parent))? = node.fields[2], case let .list(children)? = parent.fields[3] else {
                Issue.record("no parent's children"); return
            }
            #expect(children.count == count)
        }
        try expectLinear("dynamic TreeNode.next") { count in
            let node = try codec.decode(Self.repeatedMerges(field: 4, count: count, child: Self.treeChild), as: treeNode)
            guard case let .single(.message(next))? = node.fields[4], case let .list(children)? = next.fields[3] else {
                Issue.record("no next's children"); return
            }
            #expect(children.count == count)
        }
        try expectLinear("dynamic map entries") { count in
            // Maps.int32ToInt64 entries, all distinct keys.
            var input: [UInt8] = []
            for index in 0..<count { input += Self.field(2, [0x08] + Self.varint(UInt64(index)) + [0x10, 0x01]) }
            let message = try codec.decode(Data(input), as: maps)
            guard case let .map(entries)? = message.fields[2] else { Issue.record("no map"); return }
            #expect(entries.count == count)
            #expect(entries.first?.key == .int(0) && entries.last?.key == .int(Int64(count - 1)), "in key order")
        }
    }

    /// A message holding a large map, merged again and again with one more entry each time,
    /// costs linear work: the map's compaction counts what the merges brought (found by
    /// review: it restarted on every merge and sorted the whole map each time).
    @Test func theDynamicCodecMergesAMapInPlace() throws {
        let source = SourceFile(path: "holder.sb", text: """
            package switchboard.test.merge
            message Holder { 1 inner: Inner }
            message Inner { 1 entries: {int32: int64} }
            """)
        let schema = try #require(SchemaCompiler.compile(files: [source]).schema)
        let holder = try #require(schema.messageIndex(named: "Holder"))
        let codec = DynamicBinaryCodec(schema: schema)
        try expectLinear("dynamic map merged again and again") { count in
            // First `count` distinct keys, then `count` merges of one more entry with key 0.
            var first: [UInt8] = []
            for index in 0..<count { first += Self.field(1, [0x08] + Self.varint(UInt64(index)) + [0x10, 0x01]) }
            var input = Self.field(1, first)
            let again = Self.field(1, Self.field(1, [0x08, 0x00, 0x10, 0x02]))
            for _ in 0..<count { input += again }
            let message = try codec.decode(Data(input), as: holder)
            guard case let .single(.message(inner))? = message.fields[1], case let .map(entries)? = inner.fields[1] else {
                Issue.record("no map"); return
            }
            #expect(entries.count == count)
            #expect(entries.first == DynamicMapEntry(key: .int(0), value: .int(2)), "the last entry for a key wins")
        }
    }

    /// One map key sent again and again holds one entry while decoding, not one per time it
    /// came (found by review: 2 bytes of input an entry, some hundred bytes of memory each).
    @Test func theDynamicCodecHoldsARepeatedMapKeyOnce() throws {
        let codec = DynamicBinaryCodec(schema: Self.schema)
        let maps = try #require(Self.schema.messageIndex(named: "Maps"))
        func peak(_ count: Int) throws -> Int64 {
            // Maps.int32ToInt64 entries, all with key 0; the last value wins.
            var input: [UInt8] = []
            for index in 0..<count { input += Self.field(2, [0x08, 0x00, 0x10] + Self.varint(UInt64(index + 1))) }
            let data = Data(input)
            sb_allocation_counting_begin()
            let message = try codec.decode(data, as: maps)
            _ = sb_allocation_counting_end()
            guard case let .map(entries)? = message.fields[2] else {
                Issue.record("no map")
                return 0
            }
            #expect(entries == [DynamicMapEntry(key: .int(0), value: .int(Int64(count)))])
            return Int64(sb_allocation_counting_peak())
        }
        let small = try peak(1_000)
        let large = try peak(20_000)
        #expect(large < 2 * small + 64 * 1024, "most held at once: \(small) bytes for 1,000 entries, \(large) for 20,000")
    }
}
