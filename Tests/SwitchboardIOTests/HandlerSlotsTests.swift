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
        func loopStopped() {}
    }

    private func name(_ handler: (any IOHandler)?) -> Int? { (handler as? Handler)?.name }

    /// A new registration's token, which a test table always has room for.
    private func insert(_ name: Int, into slots: inout HandlerSlots) throws -> UInt64 {
        let token = slots.insert(Handler(name))
        return try #require(token)
    }

    @Test func aTokenFindsItsHandlerUntilRemoved() throws {
        var slots = HandlerSlots()
        let first = try insert(1, into: &slots), second = try insert(2, into: &slots)
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

    @Test func aStaleTokenFindsNothingInItsReusedSlot() throws {
        var slots = HandlerSlots()
        let old = try insert(1, into: &slots)
        slots.remove(old)
        let new = try insert(2, into: &slots)
        #expect(HandlerSlots.slot(of: old) == HandlerSlots.slot(of: new), "the slot is reused")
        #expect(slots[old] == nil)
        #expect(name(slots[new]) == 2)
        slots.remove(old)
        #expect(name(slots[new]) == 2, "the stale token does not remove the new registration")
    }

    @Test func tokensAreNeverZeroNorTheWakeupTokenAndFitAPointer() throws {
        var slots = HandlerSlots()
        var tokens: Set<UInt64> = []
        for round in 0..<200 {
            let token = try insert(round, into: &slots)
            #expect(token != 0 && token != UInt64.max)
            #expect(UInt(exactly: token) != nil, "kqueue carries it in a pointer")
            #expect(tokens.insert(token).inserted, "no token is handed out twice")
            if round % 3 != 0 { slots.remove(token) }
        }
        #expect(slots[0] == nil && slots[UInt64.max] == nil && slots[1 << 40] == nil)
    }

    @Test func removeAllEndsEveryToken() throws {
        var slots = HandlerSlots()
        var tokens: [UInt64] = []
        for index in 0..<5 { tokens.append(try insert(index, into: &slots)) }
        slots.removeAll()
        #expect(slots.count == 0)
        for token in tokens { #expect(slots[token] == nil) }
        let again = try insert(9, into: &slots)
        #expect(!tokens.contains(again))
        #expect(name(slots[again]) == 9)
    }
}
