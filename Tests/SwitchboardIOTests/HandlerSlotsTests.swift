@testable import SwitchboardIO
import Testing

/// The loop's registration table: a token finds its handler until it is removed, and never
/// again after, even when its slot holds another registration.
@Suite struct HandlerSlotsTests {
    final class Handler: IOHandler {
        let name: Int
        init(_ name: Int) { self.name = name }
        func readable() {}
        func writable() {}
    }

    private func name(_ handler: (any IOHandler)?) -> Int? { (handler as? Handler)?.name }

    @Test func aTokenFindsItsHandlerUntilRemoved() {
        var slots = HandlerSlots()
        let first = slots.insert(Handler(1)), second = slots.insert(Handler(2))
        #expect(first != second)
        #expect(name(slots[first]) == 1 && name(slots[second]) == 2)
        #expect(slots.count == 2)
        slots.remove(first)
        #expect(slots[first] == nil)
        #expect(name(slots[second]) == 2)
        #expect(slots.count == 1)
        slots.remove(first)
        #expect(slots.count == 1, "removing twice is ignored")
    }

    @Test func aStaleTokenFindsNothingInItsReusedSlot() {
        var slots = HandlerSlots()
        let old = slots.insert(Handler(1))
        slots.remove(old)
        let new = slots.insert(Handler(2))
        #expect(old & 0xFFFF_FFFF == new & 0xFFFF_FFFF, "the slot is reused")
        #expect(slots[old] == nil)
        #expect(name(slots[new]) == 2)
        slots.remove(old)
        #expect(name(slots[new]) == 2, "the stale token does not remove the new registration")
    }

    @Test func tokensAreNeverZeroNorTheWakeupToken() {
        var slots = HandlerSlots()
        var tokens: Set<UInt64> = []
        for round in 0..<200 {
            let token = slots.insert(Handler(round))
            #expect(token != 0 && token != UInt64.max)
            #expect(tokens.insert(token).inserted, "no token is handed out twice")
            if round % 3 != 0 { slots.remove(token) }
        }
        #expect(slots[0] == nil && slots[UInt64.max] == nil && slots[1 << 40] == nil)
    }

    @Test func removeAllEndsEveryToken() {
        var slots = HandlerSlots()
        let tokens = (0..<5).map { slots.insert(Handler($0)) }
        slots.removeAll()
        #expect(slots.count == 0)
        for token in tokens { #expect(slots[token] == nil) }
        let again = slots.insert(Handler(9))
        #expect(!tokens.contains(again))
        #expect(name(slots[again]) == 9)
    }
}
