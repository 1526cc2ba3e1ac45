import Foundation
import PeerSupport
@testable import SwitchboardRuntime
import Testing

/// The route index finds exactly the templates that match a path, in route order, as
/// trying every template in turn did.
@Suite struct PathRouteIndexTests {
    static let templates = [
        "/v1/messages/{destination}", "/v1/messages/multi_recipient", "/v1/accounts/username_hash/{hash}",
        "/v1/accounts/{id}", "/v1/{kind}/{id}", "/v1/accounts/username_hash/", "/", "", "/v2/keys/{identifier}/{deviceId}",
        "/v1/messages/{destination}/{extra}", "/v1/accounts/whoami",
    ].map(PathTemplate.init)

    static func expected(_ templates: [PathTemplate], _ path: String) -> [Int] {
        templates.indices.filter { templates[$0].parameters(matching: path[...]) != nil }
    }

    /// Checks `index` against trying every template: the same routes, and, when exactly one
    /// matches, the parameters its template gives.
    static func check(_ index: PathRouteIndex, _ templates: [PathTemplate], _ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let (candidates, parameters) = index.match(path[...])
        let expected = expected(templates, path)
        let context = Comment(rawValue: "\(path) among \(templates.map(\.description))")
        #expect(Array(candidates) == expected, context, sourceLocation: sourceLocation)
        #expect(index.candidates(for: path[...]) == candidates, context, sourceLocation: sourceLocation)
        if expected.count == 1 {
            #expect(parameters == templates[expected[0]].parameters(matching: path[...]), context, sourceLocation: sourceLocation)
        } else {
            #expect(parameters == nil, context, sourceLocation: sourceLocation)
        }
    }

    @Test(arguments: [
        "/v1/messages/+15551234", "/v1/messages/multi_recipient", "/v1/accounts/username_hash/abc", "/v1/accounts/username_hash/",
        "/v1/accounts/whoami", "/v1/accounts/", "/v1/accounts", "/", "", "x/v1/accounts/1", "/v2/keys/a/1", "/v2/keys/a",
        "/v2/keys/a/1/2", "/v1/messages/a/b", "/v1/messages//b", "//", "/v1//", "/v1/x/y",
    ])
    func findsWhatTryingEveryTemplateFinds(path: String) {
        Self.check(PathRouteIndex(Self.templates), Self.templates, path)
    }

    @Test func agreesOnRandomTemplatesAndPaths() {
        var generator = SeededGenerator(seed: 0x5EED_0F_1D3)
        let words = ["a", "b", "", "{p}", "{q}", "{p}"]
        for _ in 0..<200 {
            let templates = (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                PathTemplate("/" + (0..<Int.random(in: 1...4, using: &generator)).map { _ in words.randomElement(using: &generator)! }.joined(separator: "/"))
            }
            let index = PathRouteIndex(templates)
            for _ in 0..<30 {
                let path = "/" + (0..<Int.random(in: 0...5, using: &generator)).map { _ in ["a", "b", "", "c"].randomElement(using: &generator)! }
                    .joined(separator: "/")
                Self.check(index, templates, path)
            }
        }
    }

    @Test func findsEachOfManyLiteralsBesideOneAnother() {
        // Children of one node are searched in sorted order: lengths and bytes both vary.
        let names = (0..<300).map { "r\($0)" } + ["", "R", "r", "rr", "r\u{e9}", "\u{ff}"]
        let templates = names.map { PathTemplate("/v1/\($0)/{id}") } + names.map { PathTemplate("/v1/\($0)") }
        let index = PathRouteIndex(templates)
        for name in names + ["r300", "q1", "r-1", "s", "r\u{e8}"] {
            for path in ["/v1/\(name)/x", "/v1/\(name)", "/v1/\(name)/"] {
                Self.check(index, templates, path)
            }
        }
    }

    /// With two routes the router tries each template; with a POST route and ten more it walks
    /// its index.
    @Test(arguments: [false, true])
    func theRouterServesTheFirstRouteInOrderThatMatches(indexed: Bool) async {
        let general = EndpointDescriptor(rpcName: "t.T/General", verb: "GET", pathTemplate: "/v1/things/{id}", auth: .none)
        let special = EndpointDescriptor(rpcName: "t.T/Special", verb: "GET", pathTemplate: "/v1/things/special", auth: .none)
        let posted = EndpointDescriptor(rpcName: "t.T/Post", verb: "POST", pathTemplate: "/v1/things/special", auth: .none)
        func route(_ endpoint: EndpointDescriptor) -> RPCRoute {
            RPCRoute(endpoint: endpoint) { _, _ in RPCResponse(status: 200, body: Data(endpoint.rpcName.utf8)) }
        }
        // The general route comes first, so it serves `special` too; in the other order it does not.
        let others = (0..<(indexed ? 10 : 0)).map {
            route(EndpointDescriptor(rpcName: "t.T/Other\($0)", verb: "GET", pathTemplate: "/v1/other\($0)/{id}", auth: .none))
        }
        let post = indexed ? [route(posted)] : []
        let generalFirst = RPCRouter(routes: others + [route(general), route(special)] + post)
        let specialFirst = RPCRouter(routes: [route(special)] + others + [route(general)] + post)
        #expect((generalFirst.pathIndex != nil) == indexed)
        #expect((specialFirst.pathIndex != nil) == indexed)
        let get = ServerRequest(verb: "GET", path: "/v1/things/special")
        #expect(await generalFirst.handle(get, auth: .none).body == Data("t.T/General".utf8))
        #expect(await specialFirst.handle(get, auth: .none).body == Data("t.T/Special".utf8))
        let postAnswer = await generalFirst.handle(ServerRequest(verb: "POST", path: "/v1/things/special"), auth: .none)
        #expect(indexed ? postAnswer.body == Data("t.T/Post".utf8) : postAnswer.status == 405)
        #expect(await generalFirst.handle(ServerRequest(verb: "DELETE", path: "/v1/things/special"), auth: .none).status == 405)
        #expect(await generalFirst.handle(ServerRequest(verb: "GET", path: "/v1/other"), auth: .none).status == 404)
        #expect(await generalFirst.handle(ServerRequest(verb: "GET", path: "/v1/things/a%20b"), auth: .none).body == Data("t.T/General".utf8))
        #expect(await generalFirst.handle(ServerRequest(verb: "GET", path: "/v1/things/special"), auth: .account).status == 403)
        #expect(generalFirst.endpoints(verb: "GET", path: "/v1/things/special?x=1").map(\.rpcName) == ["t.T/General", "t.T/Special"])
    }

    /// One route: tried; eleven: through the index.
    @Test(arguments: [0, 10])
    func handlersGetTheParametersOfTheirPath(otherRoutes: Int) async {
        let endpoints = (0..<otherRoutes).map {
            EndpointDescriptor(rpcName: "t.T/Other\($0)", verb: "GET", pathTemplate: "/v1/other\($0)/{id}", auth: .none)
        } + [EndpointDescriptor(rpcName: "t.T/Pair", verb: "GET", pathTemplate: "/v1/chats/{chat}/messages/{id}", auth: .none)]
        let router = RPCRouter(routes: endpoints.map { endpoint in
            RPCRoute(endpoint: endpoint) { _, context in
                let text = context.pathParameters.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                return RPCResponse(status: 200, body: Data(text.utf8))
            }
        })
        let response = await router.handle(ServerRequest(verb: "GET", path: "/v1/chats/c%2F1/messages/42?x=1"), auth: .none)
        #expect(String(decoding: response.body, as: UTF8.self) == "chat=c%2F1,id=42")
    }

    /// Two routes for one endpoint (a service registered twice): the first serves, by path
    /// and by RPC name alike, so both transports reach the same handler.
    @Test func theFirstOfTwoRoutesForOneEndpointServesBothWays() async {
        let endpoint = EndpointDescriptor(rpcName: "t.T/Same", verb: "POST", pathTemplate: "/v1/same", auth: .none)
        func route(_ name: String) -> RPCRoute {
            RPCRoute(endpoint: endpoint, message: { _, _ in RPCResponse(status: 200, body: Data(name.utf8)) },
                     handler: { _, _ in RPCResponse(status: 200, body: Data(name.utf8)) })
        }
        let router = RPCRouter(routes: [route("first"), route("second")])
        #expect(await router.handle(ServerRequest(verb: "POST", path: "/v1/same"), auth: .none).body == Data("first".utf8))
        #expect(await router.handleMessage(rpcName: "t.T/Same", body: Data(), headers: RPCHeaders(), auth: .none).body == Data("first".utf8))
    }
}
