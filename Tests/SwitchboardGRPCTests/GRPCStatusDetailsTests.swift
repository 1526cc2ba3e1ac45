import Foundation
import SignalChat
@testable import SwitchboardGRPC
import SwitchboardHTTP2
import SwitchboardRuntime
import Testing

/// `grpc-status-details-bin` stays the caller's whatever the status becomes: an undeclared
/// status's `TransportError.grpcStatus` details, and, for every failed status, the trailer
/// among the response's trailers, which `ResponseCapture.grpcStatusDetails` decodes (padded
/// or not). The other `grpc-` fields stay the transport's. (Against grpcio:
/// `GRPCInteropTests.statusDetailsReachTheCallerWhetherTheCodeIsDeclaredOrNot`.)
@Suite struct GRPCStatusDetailsTests {
    static let head = [HPACKHeader(":status", "200"), HPACKHeader("content-type", "application/grpc")]
    /// Bytes whose base64 is padded: "AAH//g==", or "AAH//g" as gRPC may send it.
    static let details = Data([0x00, 0x01, 0xff, 0xfe])

    static func read(_ trailers: [HPACKHeader], endpoint: EndpointDescriptor = Profiles.getProfile, trailersOnly: Bool = false,
                     capture: ResponseCapture? = nil) -> Result<RPCResponse, TransportError> {
        let call = GRPCCallResponse(headers: trailersOnly ? Self.head + trailers : Self.head, message: nil, messageCount: 0,
                                    trailers: trailersOnly ? Self.head + trailers : trailers, isTrailersOnly: trailersOnly)
        return Result { () throws(TransportError) in try GRPCResponseMapping.response(for: call, endpoint: endpoint, capture: capture) }
    }

    @Test func aDeclaredStatusKeepsItsDetailsAmongTheTrailers() throws {
        #expect(GRPCMetadata.encodeBinary(Self.details) == "AAH//g")
        for value in ["AAH//g", "AAH//g=="] {
            for trailersOnly in [false, true] {
                let response = try Self.read([HPACKHeader("grpc-status", "5"), HPACKHeader("grpc-message", "gone"),
                                              HPACKHeader("grpc-status-details-bin", value), HPACKHeader("x-request-id", "7")],
                                             trailersOnly: trailersOnly).get()
                #expect(response.status == 404, "NOT_FOUND is getProfile's declared 404")
                #expect(response.trailers["grpc-status-details-bin"] == value, "\(response.trailers)")
                #expect(response.trailers["x-request-id"] == "7")
                #expect(response.trailers["grpc-status"] == nil && response.trailers["grpc-message"] == nil, "\(response.trailers)")
                #expect(response.headers["grpc-status"] == nil && response.headers["grpc-message"] == nil, "\(response.headers)")
                // What `RPCCall` does with the response: the caller's capture decodes it.
                let capture = ResponseCapture()
                capture.record(response)
                #expect(capture.grpcStatusDetails == Self.details, "\(value), trailers-only \(trailersOnly)")
            }
        }
    }

    @Test func anUndeclaredStatusCarriesItsDetailsInTheErrorAndTheCapture() {
        for trailersOnly in [false, true] {
            let capture = ResponseCapture()
            let result = Self.read([HPACKHeader("grpc-status", "12"), HPACKHeader("grpc-message", "nope"),
                                    HPACKHeader("grpc-status-details-bin", "AAH//g"), HPACKHeader("x-request-id", "8")],
                                   trailersOnly: trailersOnly, capture: capture)
            guard case let .failure(.grpcStatus(code, message, details)) = result else {
                Issue.record("expected UNIMPLEMENTED, got \(result)")
                continue
            }
            #expect(code == GRPCStatusCode.unimplemented.rawValue && message == "nope")
            #expect(details == Self.details)
            // The metadata the transport records for the caller (`RPCCall` copies it over).
            #expect(capture.status == nil)
            #expect(capture.grpcStatusDetails == Self.details, "\(capture.trailers)")
            #expect(capture.trailers["x-request-id"] == "8" && capture.trailers["grpc-status"] == nil, "\(capture.trailers)")
        }
    }

    /// From a Switchboard server, whose trailers name the exact declared status: kept too.
    @Test func anExactSwitchboardStatusKeepsTheDetails() throws {
        let response = try Self.read([HPACKHeader("grpc-status", "9"), HPACKHeader("switchboard-status", "409"),
                                      HPACKHeader("grpc-status-details-bin", "AAH//g")], endpoint: Messages.sendMessage).get()
        #expect(response.status == 409)
        #expect(response.trailers["switchboard-status"] == nil)
        let capture = ResponseCapture()
        capture.record(response)
        #expect(capture.grpcStatusDetails == Self.details)
    }

    @Test func aCaptureWithoutValidDetailsHasNone() {
        let capture = ResponseCapture()
        #expect(capture.grpcStatusDetails == nil)
        capture.record(status: 404, headers: [:], trailers: ["x-request-id": "9"])
        #expect(capture.grpcStatusDetails == nil)
        capture.record(status: 404, headers: [:], trailers: ["grpc-status-details-bin": "not base64!"])
        #expect(capture.grpcStatusDetails == nil)
        // Names are compared without case, as every header's is.
        capture.record(status: nil, headers: [:], trailers: ["Grpc-Status-Details-Bin": "AAH//g=="])
        #expect(capture.grpcStatusDetails == Self.details)
        capture.reset()
        #expect(capture.grpcStatusDetails == nil)
        // Over the WebSocket there are no trailers.
        capture.record(RPCResponse(status: 404, headers: ["grpc-status-details-bin": "AAH//g=="]))
        #expect(capture.grpcStatusDetails == nil)
    }
}
