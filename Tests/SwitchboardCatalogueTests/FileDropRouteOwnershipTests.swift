import Foundation
@testable import SwitchboardCatalogue
import SwitchboardRuntime
import Testing

/// A document is served only as the endpoint whose folder it was dropped into: where routes
/// overlap, the router serves the first that matches, so a path another endpoint's route
/// takes first is refused rather than served by that endpoint (found by review: it ran with
/// the folder's service status and version checks, not its own).
@Suite struct FileDropRouteOwnershipTests {
    static let general = EndpointDescriptor(rpcName: "test.General/Get", verb: "GET", pathTemplate: "/v1/things/{id}", auth: .none)
    static let special = EndpointDescriptor(rpcName: "test.Special/Get", verb: "GET", pathTemplate: "/v1/things/special", auth: .none)
    /// The same path for connections with an account: another connection's route, not a rival.
    static let account = EndpointDescriptor(rpcName: "test.Account/Get", verb: "GET", pathTemplate: "/v1/things/{id}", auth: .account)

    static func router(_ endpoints: [EndpointDescriptor]) -> RPCRouter {
        RPCRouter(routes: endpoints.map { endpoint in RPCRoute(endpoint: endpoint) { _, _ in RPCResponse(status: 200, body: Data(endpoint.rpcName.utf8)) } })
    }

    @Test func aPathAnotherEndpointsRouteTakesFirstIsRefused() async {
        for (order, owner) in [([Self.general, Self.special], Self.general), ([Self.special, Self.general], Self.special)] {
            let router = Self.router(order)
            let other = owner == Self.general ? Self.special : Self.general
            // The path both templates match is the first route's; dropped into the other's
            // folder, it is refused, naming who would serve it.
            #expect(FileDropProvider.servingEndpoint(verb: "GET", path: "/v1/things/special", of: owner.rpcName, router: router) == .served(owner))
            guard case let .refused(reason) = FileDropProvider.servingEndpoint(verb: "GET", path: "/v1/things/special", of: other.rpcName, router: router) else {
                Issue.record("\(other.rpcName) was let serve a path \(owner.rpcName) takes")
                continue
            }
            #expect(reason.contains("served by \(owner.rpcName)"), "\(reason)")
            // What the router then serves is indeed the owner.
            let response = await router.handle(ServerRequest(verb: "GET", path: "/v1/things/special"), auth: .none)
            #expect(String(decoding: response.body, as: UTF8.self) == owner.rpcName)
        }
        // A path only one template takes is that endpoint's, whatever the order.
        let router = Self.router([Self.special, Self.general])
        #expect(FileDropProvider.servingEndpoint(verb: "GET", path: "/v1/things/42", of: Self.general.rpcName, router: router) == .served(Self.general))
        #expect(FileDropProvider.servingEndpoint(verb: "GET", path: "/v1/things/42", of: Self.special.rpcName, router: router)
                == .refused("GET /v1/things/42 is not a route of test.Special/Get"))
    }

    @Test func aRouteForTheOtherConnectionIsNoRival() {
        let router = Self.router([Self.account, Self.general])
        #expect(FileDropProvider.servingEndpoint(verb: "GET", path: "/v1/things/7", of: Self.general.rpcName, router: router) == .served(Self.general))
        #expect(FileDropProvider.servingEndpoint(verb: "GET", path: "/v1/things/7", of: Self.account.rpcName, router: router) == .served(Self.account))
    }
}
