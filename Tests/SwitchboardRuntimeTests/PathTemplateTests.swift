import PeerSupport
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
        var generator = SeededGenerator(seed: 0x5EED0010)
        for _ in 0..<5000 {
            let template = templates.randomElement(using: &generator)!
            let count = Int.random(in: 0...5, using: &generator)
            let lead = Bool.random(using: &generator) ? "/" : ""
            let path = lead + (0..<count).map { _ in pieces.randomElement(using: &generator)! }.joined(separator: "/")
            #expect(PathTemplate(template).match(path[...]) == Self.reference(template, path), "\(template) vs \(path)")
        }
    }

    /// The list the router binds from holds what the dictionary does, in template order, and
    /// is looked up, edited, compared and printed (names only) as a dictionary would be.
    @Test func pathParametersAreTheMatchInTemplateOrder() throws {
        let parameters = try #require(PathTemplate("/v2/keys/{identifier}/{deviceId}").parameters(matching: "/v2/keys/ab%2Fc/7"))
        #expect(parameters.map(\.key) == ["identifier", "deviceId"] && parameters.values == ["ab%2Fc", "7"])
        var pairs: [String] = []
        for (name, value) in parameters { pairs.append(name + "=" + value) }
        #expect(pairs == ["identifier=ab%2Fc", "deviceId=7"], "iterated as a dictionary is")
        #expect(parameters["identifier"] == "ab%2Fc" && parameters["deviceId"] == "7" && parameters["other"] == nil)
        #expect(parameters.dictionary == ["identifier": "ab%2Fc", "deviceId": "7"])
        #expect(parameters == PathParameters(["deviceId": "7", "identifier": "ab%2Fc"]), "equal in any order")
        #expect(parameters.hashValue == PathParameters(["deviceId": "7", "identifier": "ab%2Fc"]).hashValue)
        #expect(parameters != ["identifier": "ab%2Fc"])
        #expect(parameters.description == "PathParameters(identifier, deviceId)", "no values in logs")
        var edited = parameters
        edited["deviceId"] = "8"
        edited["extra"] = "x"
        edited["identifier"] = nil
        #expect(edited.keys == ["deviceId", "extra"] && edited["deviceId"] == "8")
        let literal: PathParameters = ["a": "1", "a": "2"]
        #expect(literal.count == 1 && literal["a"] == "2", "a repeated name keeps its last value")
        #expect(PathTemplate("/v1/keepalive").parameters(matching: "/v1/keepalive")?.isEmpty == true)
        // A template that repeats a name keeps the last value, as the dictionary did, and
        // stays equal (and hashes alike) to that dictionary's parameters.
        let repeated = try #require(PathTemplate("/a/{id}/b/{id}").parameters(matching: "/a/1/b/2"))
        #expect(repeated.count == 1 && repeated["id"] == "2")
        #expect(repeated == ["id": "2"] && repeated.hashValue == PathParameters(["id": "2"]).hashValue)
        #expect(repeated.dictionary == PathTemplate("/a/{id}/b/{id}").match("/a/1/b/2"))
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
