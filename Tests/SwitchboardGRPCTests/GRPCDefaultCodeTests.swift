@testable import SwitchboardGRPC
import SwitchboardRuntime
import SwitchboardSchema
import Testing

/// The server's code for a status nobody declared and the generator's default for a declared
/// one are the same table, written twice (the generator does not depend on the gRPC runtime):
/// an undeclared 404 left as the HTTP mapping's UNIMPLEMENTED read as "no such method".
@Suite struct GRPCDefaultCodeTests {
    @Test func theServersDefaultsAreTheSchemaLanguages() {
        for status in 100..<600 {
            #expect(GRPCStatusCode(defaultForErrorStatus: status)?.rawValue == GRPCStatusCodes.defaultCode(forStatus: status), "status \(status)")
        }
        #expect(GRPCStatusCode(defaultForErrorStatus: 404) == .notFound)
        #expect(GRPCStatusCode(defaultForErrorStatus: 418) == nil)
    }

    /// An undeclared status never travels as a code a declared error uses, or a client would
    /// read it as that error: `sendMessage` sends its 409 as FAILED_PRECONDITION, so an
    /// undeclared 412 (whose default that is) goes as UNKNOWN, and an undeclared 500 as
    /// UNKNOWN where a declared error took INTERNAL. Without an endpoint (the router's own
    /// refusals) a 404 is a method nobody serves.
    @Test func anUndeclaredStatusNeverTakesADeclaredErrorsCode() {
        let endpoint = EndpointDescriptor(rpcName: "x.Y/Z", verb: "PUT", pathTemplate: "/z", auth: .none,
                                          errorStatusByGRPCCode: [9: 409, 13: 507])
        #expect(GRPCStatusCode(errorStatus: 409, endpoint: endpoint) == .failedPrecondition)
        #expect(GRPCStatusCode(errorStatus: 412, endpoint: endpoint) == .unknown)
        #expect(GRPCStatusCode(errorStatus: 507, endpoint: endpoint) == .internal)
        #expect(GRPCStatusCode(errorStatus: 500, endpoint: endpoint) == .unknown)
        #expect(GRPCStatusCode(errorStatus: 502, endpoint: endpoint) == .unknown)
        #expect(GRPCStatusCode(errorStatus: 404, endpoint: endpoint) == .notFound)
        #expect(GRPCStatusCode(errorStatus: 502, endpoint: EndpointDescriptor(rpcName: "x.Y/Z", verb: "PUT", pathTemplate: "/z", auth: .none)) == .internal)
        #expect(GRPCStatusCode(errorStatus: 404, endpoint: nil) == .unimplemented)
        #expect(GRPCStatusCode(errorStatus: 412, endpoint: nil) == .unknown)
    }
}
