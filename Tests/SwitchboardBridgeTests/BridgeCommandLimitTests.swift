import SwitchboardBridge
import Testing

/// The one-string form is held to the same head limits as the C call that takes its parts:
/// a megabyte of path or header value, or too many header lines, is `tooLarge` while parsing
/// (from the input review: only the body was bounded on this path).
struct BridgeCommandLimitTests {
    func code(_ text: String) -> BridgeError.Code? {
        do {
            _ = try BridgeCommand(parsing: text, maximumHeadBytes: 1024, maximumHeaderLines: 3)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func aLongHeadOrTooManyLinesIsTooLarge() {
        #expect(code("GET /v1/chats\nA: 1\nB: 2\nC: 3\n\n{}") == nil)
        #expect(code("GET /" + String(repeating: "a", count: 2000)) == .tooLarge)
        #expect(code("GET /" + String(repeating: "a", count: 2000) + " {}") == .tooLarge, "the one-line form")
        #expect(code("GET /v1\nA: " + String(repeating: "v", count: 2000) + "\n\n") == .tooLarge)
        #expect(code("GET /v1\nA: 1\nB: 2\nC: 3\nD: 4\n\n") == .tooLarge)
        // The body is not part of the head.
        #expect(code("GET /v1\n\n" + String(repeating: "b", count: 5000)) == nil)
        #expect(code("PUT /v1 " + String(repeating: "b", count: 5000)) == nil)
    }

    /// A space left at the end of the request line does not turn the header lines into a
    /// one-line command's body.
    @Test func trailingSpacesOnTheRequestLineKeepTheHeaders() throws {
        let command = try BridgeCommand(parsing: "GET /x \t\nKey: v\n\n", maximumHeadBytes: 1024, maximumHeaderLines: 3)
        #expect(command.path == "/x")
        #expect(command.headers["Key"] == "v")
        #expect(command.body.isEmpty)
    }
}
