import Foundation
import KitchenSink
import SignalChat
import SwitchboardRuntime
import Testing

/// Malformed JSON gets a typed error, never a crash or a hang.
@Suite struct MalformedJSONTests {
    @Test(arguments: [
        "", "   ", "[]", "null", "{", "}", #"{"x":1"#, #"{"x" 1}"#, #"{"x":1,}"#, #"{,"x":1}"#, #"{"x":1 "y":2}"#,
        #"{"label":"unterminated}"#, #"{"label":"bad \q escape"}"#, #"{"label":"\ud800"}"#, #"{"label":"\udc00x"}"#,
        "{\"label\":\"raw\u{1}control\"}", #"{"label":"\u12"}"#, #"{"x":tru}"#, #"{"x":1}  x"#, #"{"x":1}{}"#,
        #"{"x":[1]}"#, #"{"x":{}}"#, #"{"label":5}"#, #"{"x":"1e1000"}"#, #"{x:1}"#,
    ])
    func rejectsMalformedPoints(json: String) {
        #expect(throws: JSONDecodingError.self) { try Point(jsonString: json) }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = Array(#"{"label":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(throws: JSONDecodingError.invalidString(offset: 9)) { try Point(jsonUTF8Bytes: bytes) }
    }

    @Test func nestingIsBounded() {
        let deepArrays = #"{"z":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}"
        #expect(throws: JSONDecodingError.nestingTooDeep(limit: 100)) {
            try Point(jsonString: deepArrays, options: JSONDecodingOptions(ignoreUnknownFields: true))
        }
        var tree = "{}"
        for _ in 0..<150 { tree = #"{"parent":\#(tree)}"# }
        #expect(throws: JSONDecodingError.nestingTooDeep(limit: 100)) { try TreeNode(jsonString: tree) }
        #expect(throws: Never.self) { try TreeNode(jsonString: tree, options: JSONDecodingOptions(maximumDepth: 200)) }
    }

    /// Random corruption of valid JSON: every outcome is a value or a typed error.
    @Test func randomCorruptionNeverCrashes() throws {
        var random = RandomMessages(seed: 99)
        let alphabet = Array(#"{}[]:,"\0123456789-+.eE ntfaluru\"#.utf8)
        var rejected = 0
        for _ in 0..<2000 {
            var bytes = Array(try random.composite().jsonString().utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random.rng) {
                guard !bytes.isEmpty else { break }
                let position = Int.random(in: 0..<bytes.count, using: &random.rng)
                switch Int.random(in: 0..<3, using: &random.rng) {
                case 0: bytes[position] = alphabet.randomElement(using: &random.rng)!
                case 1: bytes.remove(at: position)
                default: bytes.insert(alphabet.randomElement(using: &random.rng)!, at: position)
                }
            }
            do {
                _ = try Composite(jsonUTF8Bytes: bytes)
            } catch {
                rejected += 1
            }
        }
        #expect(rejected > 500)
    }
}
