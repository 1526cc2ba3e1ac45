import Foundation
@testable import SwitchboardGRPC
import SwitchboardHTTP2
import SwitchboardRuntime
import Testing

/// A plain answer (`:status 200`, `application/grpc`, one message, `grpc-status: 0`) is read by
/// a shortcut: it must give exactly what the full reading gives, and only for such answers.
@Suite struct GRPCResponseMappingTests {
    static let endpoint = EndpointDescriptor(rpcName: "test.Plain/Get", verb: "POST", pathTemplate: "/plain", auth: .none)
    static let plainHead = [HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")]
    static let plainTrailers = [HPACKHeader("grpc-status", "0")]

    static func read(_ headers: [HPACKHeader], _ trailers: [HPACKHeader], messages: Int = 1, trailersOnly: Bool = false,
                     sentJSON: Bool = false) -> Result<RPCResponse, TransportError> {
        let call = GRPCCallResponse(headers: headers, message: messages > 0 ? Data([1, 2, 3]) : nil, messageCount: messages, trailers: trailers,
                                    isTrailersOnly: trailersOnly)
        return Result { () throws(TransportError) in try GRPCResponseMapping.response(for: call, endpoint: endpoint, sentJSON: sentJSON) }
    }

    /// The same head in the other order: the full reading finds the same values, the
    /// shortcut does not apply.
    static let reordered = Array(plainHead.reversed())

    @Test func aPlainAnswerReadsAsTheFullReadingReadsIt() throws {
        #expect(GRPCResponseMapping.isPlainProtobufHead(Self.plainHead))
        #expect(!GRPCResponseMapping.isPlainProtobufHead(Self.reordered))
        let shortcut = try Self.read(Self.plainHead, Self.plainTrailers).get()
        let full = try Self.read(Self.reordered, Self.plainTrailers).get()
        #expect(shortcut == full)
        #expect(shortcut.status == 200 && shortcut.body == Data([1, 2, 3]) && shortcut.headers["Content-Type"] == "application/x-protobuf")
    }

    /// Answers that look plain but are not: each read as the full reading reads it.
    @Test func nearlyPlainAnswersTakeTheFullReading() {
        let cases: [(head: [HPACKHeader], trailers: [HPACKHeader], messages: Int, trailersOnly: Bool, sentJSON: Bool)] = [
            (Self.plainHead, Self.plainTrailers, 1, false, true),
            (Self.plainHead, Self.plainTrailers, 0, false, false),
            (Self.plainHead, Self.plainTrailers, 2, false, false),
            (Self.plainHead, Self.plainTrailers + [HPACKHeader("grpc-message", "fine")], 1, false, false),
            (Self.plainHead, Self.plainTrailers + [HPACKHeader("x-request-id", "7")], 1, false, false),
            (Self.plainHead, [HPACKHeader("grpc-status", "5")], 1, false, false),
            (Self.plainHead, [HPACKHeader("grpc-status", "00")], 1, false, false),
            (Self.plainHead + [HPACKHeader("x-request-id", "7")], Self.plainTrailers, 1, false, false),
            ([HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc+json")], Self.plainTrailers, 1, false, false),
            (Self.plainTrailers, Self.plainTrailers, 0, true, false),
            (Self.plainHead, Self.plainTrailers, 1, true, false),
        ]
        for (index, item) in cases.enumerated() {
            let viaPlainHead = Self.read(item.head, item.trailers, messages: item.messages, trailersOnly: item.trailersOnly, sentJSON: item.sentJSON)
            // The head in another order (when it has the plain head's two fields) never takes the shortcut.
            let head = item.head.count >= 2 ? [item.head[1], item.head[0]] + item.head.dropFirst(2) : item.head
            let full = Self.read(head, item.trailers, messages: item.messages, trailersOnly: item.trailersOnly, sentJSON: item.sentJSON)
            #expect(viaPlainHead == full, "case \(index)")
        }
    }
}
