import Foundation
import KitchenSink
import SwitchboardRuntime
import Testing

/// A handler's answer that cannot be written in its encoding (a timestamp JSON cannot
/// express) is a 500, not a 200 with an empty body the client reads as something else (from
/// the runtime review).
@Suite struct UnencodableResponseTests {
    @Test func anAnswerJSONCannotExpressIsA500() {
        let outOfRange = Composite(title: "x", createdAt: ProtoTimestamp(seconds: 253_402_300_800, nanos: 0))
        let json = RPCResponse.ok(outOfRange, encoding: .json)
        #expect(json.status == 500)
        #expect(json.body.isEmpty)
        #expect(RPCResponse.ok(outOfRange, encoding: .protobuf).status == 200, "binary holds it")
        #expect(RPCResponse.ok(Composite(title: "x"), encoding: .json).status == 200)
        #expect(RPCResponse.error(status: 422, body: outOfRange, encoding: .json).status == 500)
    }
}
