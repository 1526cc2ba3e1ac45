import Foundation
import PeerSupport
@testable import SwitchboardRuntime
import Testing

/// Header names compare case-insensitively, exactly as `lowercased()` on both sides would.
@Suite struct RPCHeadersTests {
    @Test func nameMatchingAgreesWithLowercasing() {
        // ASCII of both cases, and non-ASCII whose lowercase changes length or lands in ASCII
        // (the Kelvin sign lowercases to "k", "İ" to two scalars).
        let pieces = ["a", "A", "k", "K", "-", "_", "0", "é", "É", "\u{212A}", "İ", "i", "ß", "Σ", "σ", "e\u{301}", ":"]
        var generator = SeededGenerator(seed: 0x5EED0011)
        func word() -> String {
            (0..<Int.random(in: 0...12, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        }
        for _ in 0..<3000 {
            let lhs = word()
            // Half the time a case-changed copy, so that matches are common.
            let rhs = Bool.random(using: &generator) ? lhs.map { Bool.random(using: &generator) ? $0.uppercased() : String($0) }.joined() : word()
            #expect(RPCHeaders.namesMatch(lhs, rhs) == (lhs.lowercased() == rhs.lowercased()), "\(lhs) vs \(rhs)")
        }
    }

    /// Storage identity: copies of one list share it; an equal list built apart, a copy that
    /// was changed, and empty lists do not.
    @Test func sharedStorageIsTheSameListNotAnEqualOne() {
        let shared = BodyEncoding.protobuf.requestHeaders(withBody: true)
        let copy = shared
        #expect(copy.sharesStorage(with: shared))
        let equal = RPCHeaders(shared.fields.map { (name: $0.name, value: $0.value) })
        #expect(equal == shared)
        #expect(!equal.sharesStorage(with: shared))
        var changed = shared
        changed.add("X-Trace", "1")
        #expect(!changed.sharesStorage(with: shared))
        #expect(!RPCHeaders().sharesStorage(with: RPCHeaders()))
        // Another shared list of the same length: its own storage.
        #expect(!BodyEncoding.json.requestHeaders(withBody: true).sharesStorage(with: shared))
    }

    @Test func lookupAndReplacementIgnoreCase() {
        var headers: RPCHeaders = ["Content-Type": "application/json", "X-Signal-Timestamp": "1"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["X-SIGNAL-TIMESTAMP"] == "1")
        #expect(headers["Content-Length"] == nil)
        headers.set("CONTENT-TYPE", "application/x-protobuf")
        #expect(headers.fields.map(\.name) == ["X-Signal-Timestamp", "CONTENT-TYPE"])
        #expect(headers["Content-Type"] == "application/x-protobuf")
    }

    @Test func onlyTokenNamesAndValuesWithoutLineBreaksAreSendable() throws {
        let fine: RPCHeaders = ["X-Request_ID.2~": "caf\u{E9}\tand tabs", "Accept": "", "a": "b"]
        try fine.checkSendable()
        for (name, value) in [("X:Y", "v"), ("two words", "v"), ("", "v"), ("Caf\u{E9}", "v"), ("X", "a\rb"), ("X", "a\nb"), ("X", "a\u{0}b")] {
            let headers = RPCHeaders([(name, value)])
            do {
                try headers.checkSendable()
                Issue.record("\(name): \(value) must be refused")
            } catch {
                if case .invalidRequest = error {} else { Issue.record("expected invalidRequest, got \(error)") }
            }
            // An answer that must go anyway goes without it.
            let mixed = RPCHeaders([("Keep", "1"), (name, value)])
            #expect(mixed.sendableOnly == RPCHeaders([("Keep", "1")]))
        }
        #expect(fine.sendableOnly == fine)
    }
}
