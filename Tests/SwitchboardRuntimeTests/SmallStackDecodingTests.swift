import Foundation
import KitchenSink
import PeerSupport
import SwitchboardDynamic
import SwitchboardRuntime
import Testing

/// A message nested to the decoding limits, read and written on a thread with the stack a
/// macOS or iOS app gives a secondary thread, a Dispatch worker or a Swift concurrency thread
/// (512 KB), in this debug build: the codecs recurse per level, and what a peer sends must not
/// overflow the stack of whoever decodes it.
@Suite struct SmallStackDecodingTests {
    static func nested(_ depth: Int) -> TreeNode {
        var node = TreeNode(name: "leaf")
        for level in 1..<depth { node = TreeNode(name: "level \(level)", parent: node, children: [TreeNode(name: "sibling")]) }
        return node
    }

    @Test func binaryAtTheDepthLimit() {
        // The root and 100 messages nested below it: the most the default options take.
        let bytes = Self.nested(101).serializedBytes()
        let result = onThread { () -> (decoded: Bool, sameAgain: Bool, refused: Bool) in
            let decoded = try? TreeNode(serializedBytes: bytes)
            let deeper = Self.nested(102).serializedBytes()
            let refused: Bool
            do {
                _ = try TreeNode(serializedBytes: deeper)
                refused = false
            } catch {
                refused = true
            }
            return (decoded != nil, decoded?.serializedBytes() == bytes, refused)
        }
        #expect(result.decoded)
        #expect(result.sameAgain)
        #expect(result.refused, "one level past the limit is refused")
    }

    /// An Any packing 150 levels of lists in lists (300 messages), written to JSON: refused
    /// (deeper than JSON allows) without overflowing the small stack, in both codecs (from the
    /// decoding review: the packed bytes were decoded 300 levels deep first).
    static func deepLists() -> WellKnown {
        var value = ProtoValue(kind: .numberValue(1))
        for _ in 0..<150 { value = ProtoValue(kind: .listValue(ProtoListValue(values: [value]))) }
        guard case let .listValue(top)? = value.kind else { return WellKnown() }
        return WellKnown(anything: ProtoAny(packing: top))
    }

    @Test func anAnyPackingDeepListsIsRefusedOnASmallStack() {
        let lists = Self.deepLists()
        #expect(onThread { (try? lists.jsonString()) == nil })
    }

    @Test func anAnyPackingDeepListsIsRefusedOnASmallStackByTheDynamicCodec() throws {
        let schema = AnyJSONDepthTests.schema
        let wellKnown = try #require(schema.messageIndex(named: "WellKnown"))
        let bytes = Self.deepLists().serializedData()
        #expect(onThread { () -> Bool in
            guard let dynamic = try? DynamicBinaryCodec(schema: schema).decode(bytes, as: wellKnown) else { return false }
            return (try? DynamicJSONCodec(schema: schema).encodeStrictly(dynamic)) == nil
        })
    }

    /// The schema-driven codec at its limits on the small stack: its decoding spends more
    /// stack a level than the generated code's, and 100 levels overflowed 512 KB (found by
    /// review); a message nested past a few levels is now decoded on a thread with room.
    @Test func theDynamicCodecAtTheDepthLimit() throws {
        let schema = AnyJSONDepthTests.schema
        let treeNode = try #require(schema.messageIndex(named: "TreeNode"))
        // The root and 99 nested below it: the most this codec takes.
        let bytes = Self.nested(100).serializedData()
        let text = try Self.nested(45).jsonString()
        let result = onThread { () -> (binary: Bool, json: String?) in
            let codec = DynamicBinaryCodec(schema: schema)
            let decoded = try? codec.decode(bytes, as: treeNode)
            let json = DynamicJSONCodec(schema: schema)
            let fromJSON = (try? json.decode(Data(text.utf8), as: treeNode)).flatMap { try? json.encodeStrictly($0) }
            return (decoded.map { codec.encode($0) == bytes } ?? false, fromJSON)
        }
        #expect(result.binary)
        #expect(result.json == text)
    }

    /// `levels` TreeNodes, each `parent` of the one before, each also holding an unknown field
    /// 99 that nests `groups` groups.
    static func groupsAtEveryLevel(levels: Int, groups: Int) -> Data {
        var bytes: [UInt8] = []
        for _ in 0..<levels {
            // The known field first, as encoders write it, so re-encoding gives the same bytes.
            var level: [UInt8] = []
            if !bytes.isEmpty {
                level.append(0x12)
                var length = bytes.count
                while length >= 0x80 { level.append(UInt8(length & 0x7F) | 0x80); length >>= 7 }
                level.append(UInt8(length))
                level += bytes
            }
            for _ in 0..<groups { level += [0x9B, 0x06] }
            for _ in 0..<groups { level += [0x9C, 0x06] }
            bytes = level
        }
        return Data(bytes)
    }

    /// Unknown groups count against the same depth as messages, in both codecs, as in
    /// protobuf's parsers (from the review of the codecs' depth rules: the schema-driven codec
    /// gave every message level a fresh budget of 100 groups, so 16 levels recursed 1,600 deep
    /// on the caller's stack).
    @Test func groupsNestedAtEveryLevelShareTheDepthLimit() throws {
        let schema = AnyJSONDepthTests.schema
        let treeNode = try #require(schema.messageIndex(named: "TreeNode"))
        let deep = Self.groupsAtEveryLevel(levels: 16, groups: 99)
        // Deeper than the dynamic codec's first, shallow attempt: decoded again with room.
        let within = [Self.groupsAtEveryLevel(levels: 2, groups: 40), Self.groupsAtEveryLevel(levels: 1, groups: 90)]
        let result = onThread { () -> (generated: Bool, dynamic: Bool, generatedWithin: Bool, dynamicWithin: Bool) in
            let codec = DynamicBinaryCodec(schema: schema)
            return ((try? TreeNode(serializedData: deep)) == nil, (try? codec.decode(deep, as: treeNode)) == nil,
                    within.allSatisfy { (try? TreeNode(serializedData: $0))?.serializedData() == $0 },
                    within.allSatisfy { bytes in (try? codec.decode(bytes, as: treeNode)).map { codec.encode($0) } == bytes })
        }
        #expect(result.generated, "the generated codec refuses 16 levels of 99 groups")
        #expect(result.dynamic, "the dynamic codec refuses 16 levels of 99 groups")
        #expect(result.generatedWithin)
        #expect(result.dynamicWithin)
    }

    /// The deepest Struct in an Any a JSON reader takes is written back, on the small stack.
    @Test func theDeepestStructInAnAnyRoundTripsOnASmallStack() {
        var levels = 0
        while (try? WellKnown(jsonString: AnyJSONDepthTests.anyOfStruct(levels: levels + 1))) != nil { levels += 1 }
        let structs = AnyJSONDepthTests.anyOfStruct(levels: levels)
        #expect(onThread { try? WellKnown(jsonString: structs).jsonString() } == structs)
    }

    @Test func theDeepestStructInAnAnyRoundTripsOnASmallStackInTheDynamicCodec() throws {
        var levels = 0
        while (try? WellKnown(jsonString: AnyJSONDepthTests.anyOfStruct(levels: levels + 1))) != nil { levels += 1 }
        let structs = AnyJSONDepthTests.anyOfStruct(levels: levels)
        let schema = AnyJSONDepthTests.schema
        let wellKnown = try #require(schema.messageIndex(named: "WellKnown"))
        #expect(onThread { () -> String? in
            let codec = DynamicJSONCodec(schema: schema)
            return (try? codec.decode(Data(structs.utf8), as: wellKnown)).flatMap { try? codec.encodeStrictly($0) }
        } == structs)
    }

    @Test func jsonAtTheDepthLimit() throws {
        // JSON counts objects and arrays: each level is an object and the children's array.
        let text = try Self.nested(45).jsonString()
        let result = onThread { () -> String? in
            guard let decoded = try? TreeNode(jsonString: text) else { return nil }
            return try? decoded.jsonString()
        }
        #expect(result == text)
    }
}
