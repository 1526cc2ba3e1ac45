import Foundation
import KitchenSink
import SwitchboardRuntime
import Testing

/// A message that contains itself through a field that is never optional (`Chain.next`), as
/// protobuf allows: its default is made on read, so nothing recurses without end.
@Suite struct SelfContainingMessageTests {
    @Test func theDefaultIsMadeOnReadAndWritesNothing() throws {
        let chain = Chain()
        #expect(chain.next.next.next.label == "")
        #expect(chain.serializedBytes().isEmpty)
        #expect(try chain.jsonString() == "{}")
        #expect(String(describing: chain).count < 200, "the description shows what was set, not endless defaults")
    }

    /// As in protobuf, a message field remembers being set, even to an empty message: it is
    /// written (as an empty message) and the message differs from one where it is unset.
    @Test func aFieldSetToTheDefaultIsPresent() throws {
        var set = Chain()
        set.next = Chain()
        #expect(set != Chain())
        #expect(set.serializedBytes() == [0x12, 0x00])
        #expect(try set.jsonString() == #"{"next":{}}"#)
        #expect(try Chain(serializedBytes: [0x12, 0x00]) == set)
        #expect(try Chain(jsonString: #"{"next":{}}"#) == set)
        #expect(Set([set, Chain(), set]).count == 2)
        // The memberwise initializer leaves what it is not given unset.
        #expect(Chain(label: "x").serializedBytes() == [0x0A, 0x01, 0x78])
    }

    @Test func deepChainsRoundTripInBothCodecs() throws {
        var chain = Chain(label: "end")
        for index in 0..<50 { chain = Chain(label: "link \(index)", next: chain) }
        #expect(try Chain(serializedBytes: chain.serializedBytes()) == chain)
        #expect(try Chain(jsonString: chain.jsonString()) == chain)
        var walked = 0
        var cursor = chain
        while cursor.label != "end" { cursor = cursor.next; walked += 1 }
        #expect(walked == 50)
    }

    @Test func repeatedOccurrencesMergeIntoTheBox() throws {
        let first = Chain(next: Chain(label: "a")).serializedBytes()
        let second = Chain(next: Chain(next: Chain(label: "b"))).serializedBytes()
        let merged = try Chain(serializedBytes: first + second)
        #expect(merged.next.label == "a")
        #expect(merged.next.next.label == "b")
    }
}
