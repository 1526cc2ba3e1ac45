import Foundation
import PeerSupport
import SwitchboardBridge
import Testing

/// Whatever a foreign core sends, the bridge answers with a JSON document: random commands
/// built from the pieces real ones use, and random bytes.
@Suite struct StringBridgeRobustnessTests {
    @Test func randomCommandsAlwaysGetADocument() async throws {
        let bridge = StringBridge.inProcess()
        var generator = SeededGenerator(seed: 0x5EED0002)
        let pieces = ["GET", "PUT", "POST", "DELETE", " ", "/", "/v1", "/v2/keys", "chats", "{", "}", "\"", ":", "?", "&", "=",
                      "%", "%zz", "\n", "\r\n", "Unidentified-Access-Key", "limit", "before_id", "[", "]", "null", "1e999", "\\u0000", "é", "\u{0}"]
        for _ in 0..<400 {
            var command = ""
            for _ in 0..<Int.random(in: 0...24, using: &generator) { command += pieces.randomElement(using: &generator)! }
            let answer = await bridge.send(command: command)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.utf8)) as? [String: Any], "\(command.debugDescription) -> \(answer)")
            #expect(["success", "nonSuccess", "failure", "error"].contains(object["type"] as? String ?? ""), "\(command.debugDescription) -> \(answer)")
        }
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let body = String(decoding: bytes, as: UTF8.self)
            let answer = await bridge.send(verb: "POST", path: "/v1/chats/c/messages", query: "", body: body)
            #expect((try? JSONSerialization.jsonObject(with: Data(answer.utf8))) != nil, "\(answer)")
        }
    }
}

/// Deep nesting is refused, not recursed into: a body of a million brackets.
@Suite struct StringBridgeNestingTests {
    @Test func deeplyNestedBodiesGetAnErrorDocument() async throws {
        var options = StringBridge.Options()
        options.maxRequestBytes = 4 << 20
        let bridge = StringBridge.inProcess(options: options)
        for body in [String(repeating: "[", count: 1_000_000), String(repeating: "{\"a\":", count: 300_000)] {
            let answer = object(await bridge.send(verb: "POST", path: "/v1/chats/c/messages", body: body))
            #expect(answer["type"] as? String == "error")
        }
    }
}
