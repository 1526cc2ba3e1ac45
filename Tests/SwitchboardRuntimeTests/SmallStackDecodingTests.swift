import Foundation
import KitchenSink
import PeerSupport
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
