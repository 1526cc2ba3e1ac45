import SwitchboardGRPC
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
}
