import Foundation
import KitchenSink
import SwitchboardRuntime
import Testing

/// A message that contains itself through a field that is never absent (`Chain.next`), as
/// protobuf allows: its default is made on read, so nothing recurses without end.
@Suite struct SelfContainingMessageTests {
    @Test func theDefaultIsMadeOnReadAndWritesNothing() throws {
        let chain = Chain()
        #expect(chain.next.next.next.label == "")
        #expect(chain.serializedBytes().isEmpty)
        #expect(try chain.jsonString() == "{}")
        #expect(String(describing: chain).count < 200, "the description shows what was set, not endless defaults")
    }

    @Test func aSetDefaultEqualsAnUnsetOneAndHashesAlike() {
        var set = Chain()
        set.next = Chain()
        #expect(set == Chain())
        #expect(set.hashValue == Chain().hashValue)
        var deeper = Chain()
        deeper.next.next = Chain(label: "x")
        #expect(deeper != Chain())
        #expect(Set([deeper, set, Chain()]).count == 2)
    }

    @Test func deepChainsRoundTripInBothCodecs() throws {
        var chain = Chain(label: "end")
        for index in 0..<50 { chain = Chain(label: "link \(index)", next: chain) }
        #expect(try Chain(serializedBytes: chain.serializedBytes()) == chain)
        #expect(try Chain(jsonString: chain.jsonString()) == chain)
        var walked = 0
        var cursor = chain
        while cursor != Chain() { cursor = cursor.next; walked += 1 }
        #expect(walked == 51)
    }

    @Test func repeatedOccurrencesMergeIntoTheBox() throws {
        let first = Chain(next: Chain(label: "a")).serializedBytes()
        let second = Chain(next: Chain(next: Chain(label: "b"))).serializedBytes()
        let merged = try Chain(serializedBytes: first + second)
        #expect(merged.next.label == "a")
        #expect(merged.next.next.label == "b")
    }
}
