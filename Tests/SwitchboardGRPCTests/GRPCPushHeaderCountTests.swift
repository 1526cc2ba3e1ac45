import Foundation
@testable import SwitchboardGRPC
import SwitchboardRuntime
import Testing

/// A push's decoded cost is charged before it is decoded: its headers are counted from its
/// tags, which must agree with what decoding finds, and bytes that are no message count as
/// nothing to decode.
@Suite struct GRPCPushHeaderCountTests {
    @Test(arguments: [0, 1, 7, 300])
    func theCountFromTagsIsTheDecodedCount(headers: Int) throws {
        let fields = (0..<headers).map { (name: "x-h\($0)", value: String(repeating: "v", count: $0 % 5)) }
        let request = ServerRequest(verb: "PUT", path: "/api/v1/message", headers: RPCHeaders(fields), body: Data([1, 2, 3]))
        var bytes = GRPCPush(id: 42, request: request).serializedBytes()
        // An unknown field of every wire type after them is skipped, not counted.
        bytes += [0x30, 0x01, 0x3D, 0, 0, 0, 0, 0x41, 0, 0, 0, 0, 0, 0, 0, 0, 0x4A, 0x02, 0x22, 0x00]
        #expect(GRPCPush.headerCount(inSerialized: bytes) == headers)
        #expect(try GRPCPush(serializedBytes: bytes).headers.count == headers)
    }

    @Test func bytesThatAreNoMessageCountAsNothing() {
        // A length past the end, a truncated varint, a lone end-group.
        for bytes: [UInt8] in [[0x22, 0x05, 0x00], [0x08, 0xFF], [0x0C]] {
            #expect(GRPCPush.headerCount(inSerialized: bytes) == nil, "\(bytes)")
            #expect(throws: WireDecodingError.self) { try GRPCPush(serializedBytes: bytes) }
        }
        #expect(GRPCPush.headerCount(inSerialized: []) == 0)
    }
}
