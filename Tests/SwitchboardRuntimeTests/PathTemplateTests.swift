import SwitchboardRuntime
import Testing

/// The byte-walking matcher against the plain split-and-compare definition.
@Suite struct PathTemplateTests {
    /// A path starts with "/"; both split on "/" and compared part by part.
    static func reference(_ template: String, _ path: String) -> [String: String]? {
        guard path.hasPrefix("/") else { return nil }
        let segments = template.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard segments.count == parts.count else { return nil }
        var parameters: [String: String] = [:]
        for (segment, part) in zip(segments, parts) {
            if segment.hasPrefix("{"), segment.hasSuffix("}") {
                guard !part.isEmpty else { return nil }
                parameters[String(segment.dropFirst().dropLast())] = String(part)
            } else if segment != part {
                return nil
            }
        }
        return parameters
    }

    @Test func agreesWithTheDefinitionOnRandomPaths() {
        let templates = ["/v1/messages/{destination}", "/v1/accounts/username_hash/{hash}", "/", "/v1/{a}/{b}", "/v1/keepalive", "/v2/keys/{identifier}/{deviceId}"]
        let pieces = ["v1", "v2", "messages", "keepalive", "accounts", "username_hash", "keys", "abc", "%2F", "é", "", "x"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<5000 {
            let template = templates.randomElement(using: &generator)!
            let count = Int.random(in: 0...5, using: &generator)
            let lead = Bool.random(using: &generator) ? "/" : ""
            let path = lead + (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined(separator: "/")
            #expect(PathTemplate(template).match(path[...]) == Self.reference(template, path), "\(template) vs \(path)")
        }
    }

    @Test func matchesTheObviousCases() {
        #expect(PathTemplate("/v1/messages/{destination}").match("/v1/messages/abc") == ["destination": "abc"])
        #expect(PathTemplate("/v1/messages/{destination}").match("/v1/messages/") == nil)
        #expect(PathTemplate("/v1/messages/{destination}").match("/v1/messages/abc/") == nil)
        #expect(PathTemplate("/v1/keepalive").match("/v1/keepalive") == [:])
        #expect(PathTemplate("/v1/keepalive").match("/v1") == nil)
        // Something before the first "/" is another path, not this one (from the runtime review).
        #expect(PathTemplate("/v1/profile").match("x/v1/profile") == nil)
        #expect(PathTemplate("/v1/{id}").match("evil/v1/abc") == nil)
    }
}
