import PeerSupport
@testable import SwitchboardHTTP2
import Testing

/// The stream table against a `Dictionary` doing the same operations: inserts, updates,
/// removals (which move later members of a probe run back) and growth, over ids crowded into
/// a small range so that runs are long and wrap around the end of the table.
@Suite struct HTTP2StreamTableTests {
    static func state(_ id: UInt32, window: Int) -> HTTP2StreamState {
        HTTP2StreamState(id: id, isLocallyInitiated: id % 2 == 1, phase: .open, headers: .awaitingInitial, sendWindow: window, receiveWindow: 0)
    }

    @Test(arguments: [1 as UInt64, 2, 3, 4])
    func behavesAsADictionary(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var table = HTTP2StreamTable(multiplier: UInt32.random(in: 0...UInt32.max, using: &random))
        var model: [UInt32: Int] = [:]
        for step in 0..<20_000 {
            // Ids from a range about twice the live count: collisions and reuse all the time.
            let id = UInt32.random(in: 1...200, using: &random)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<4:
                table[id] = Self.state(id, window: step)
                model[id] = step
            case 4..<6:
                #expect(table.removeValue(forKey: id)?.sendWindow == model.removeValue(forKey: id))
            case 6:
                table[id] = nil
                model[id] = nil
            default:
                #expect(table[id]?.sendWindow == model[id])
                #expect(table[id]?.id == model[id].map { _ in id })
            }
            #expect(table.count == model.count)
        }
        #expect(table.keys.sorted() == model.keys.sorted())
        for (id, window) in model { #expect(table[id]?.sendWindow == window) }
        #expect(table[0] == nil)
        table.removeAll()
        #expect(table.isEmpty && table.keys.isEmpty)
    }

    /// Filling far past the first capacity and emptying again in another order.
    @Test func growsAndEmpties() {
        var table = HTTP2StreamTable()
        let ids = (0..<1000).map { UInt32($0 * 2 + 1) }
        for id in ids { table[id] = Self.state(id, window: Int(id)) }
        #expect(table.count == 1000)
        for id in ids.reversed() where id % 3 == 0 { table[id] = nil }
        for id in ids { #expect(table[id]?.sendWindow == (id % 3 == 0 ? nil : Int(id))) }
        for id in ids { table.removeValue(forKey: id) }
        #expect(table.isEmpty)
    }

    /// The same table holds the driver's delegates: any value, all of them handed back (and
    /// the table emptied) when the connection ends.
    @Test func holdsAnyValueAndHandsThemAllBack() {
        var map = HTTP2StreamMap<String>()
        for id in stride(from: 1 as UInt32, through: 99, by: 2) { map[id] = "stream \(id)" }
        map.removeValue(forKey: 3)
        map[5] = nil
        #expect(map.count == 48)
        #expect(map[7] == "stream 7" && map[3] == nil && map[2] == nil)
        #expect(Set(map.values) == Set(stride(from: 7 as UInt32, through: 99, by: 2).map { "stream \($0)" } + ["stream 1"]))
        map.removeAll()
        #expect(map.isEmpty && map.values.isEmpty && map[1] == nil)
    }
}
