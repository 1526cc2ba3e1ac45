import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema

/// Finds the endpoint a REST-style command stands for, as a server's router would: by
/// path template, then verb. Two endpoints may share a route when one needs a key the other
/// does not (Signal's sealed-sender sends); the keys a command carries pick between them.
struct BridgeRouter: Sendable {
    struct Route: Sendable {
        let endpoint: DynamicEndpoint
        let template: PathTemplate
        let keys: Set<String>
        /// Literal segments: `/v1/chats/archived` wins over `/v1/chats/{chatId}`.
        let specificity: Int
    }

    let routes: [Route]

    init(schema: Schema) {
        var routes: [Route] = []
        for service in schema.services {
            for endpoint in service.endpoints {
                let template = endpoint.runtimePathTemplate
                let path = template.split(separator: "?", maxSplits: 1).first ?? ""
                let literal = path.split(separator: "/").filter { !$0.hasPrefix("{") }.count
                routes.append(Route(
                    endpoint: DynamicEndpoint(schema: schema, service: service, endpoint: endpoint),
                    template: PathTemplate(template), keys: Set(endpoint.keys.map { schema.keys[$0].name }), specificity: literal))
            }
        }
        self.routes = routes
    }

    /// The endpoint and its still-encoded path parameters. `keys` are the schema names of the
    /// keys the command carries.
    func route(verb: String, path: String, keys: Set<String>) throws(BridgeError) -> (DynamicEndpoint, [String: String]) {
        var matches: [(route: Route, parameters: [String: String])] = []
        for route in routes {
            if let parameters = route.template.match(path[...]) { matches.append((route, parameters)) }
        }
        guard !matches.isEmpty else { throw BridgeError(.unknownPath, "no endpoint serves \(verb) \(Self.loggable(path))") }
        let sameVerb = matches.filter { $0.route.endpoint.endpoint.verb == verb }
        guard !sameVerb.isEmpty else {
            let allowed = Set(matches.map { $0.route.endpoint.endpoint.verb }).sorted().joined(separator: ", ")
            throw BridgeError(.methodNotAllowed, "\(Self.loggable(path)) takes \(allowed), not \(verb)")
        }
        let best = sameVerb.map(\.route.specificity).max()!
        let candidates = sameVerb.filter { $0.route.specificity == best }
        if candidates.count == 1 { return (candidates[0].route.endpoint, candidates[0].parameters) }
        let byKeys = candidates.filter { $0.route.keys == keys }
        if byKeys.count == 1 { return (byKeys[0].route.endpoint, byKeys[0].parameters) }
        let names = candidates.map { "\($0.route.endpoint.service.name).\($0.route.endpoint.endpoint.name)" }.joined(separator: ", ")
        throw BridgeError(.ambiguousRoute, "\(verb) \(Self.loggable(path)) is served by \(names); the keys it carries must match one of them")
    }

    /// A path as errors show it: it names the route without echoing unbounded input.
    static func loggable(_ path: String) -> String {
        path.count > 200 ? String(path.prefix(200)) + "…" : path
    }
}
