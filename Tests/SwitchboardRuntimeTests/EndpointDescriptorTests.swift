import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// A descriptor is a value: two built alike are equal whether or not they share storage,
/// and any field that differs makes them unequal.
@Suite struct EndpointDescriptorTests {
    static func descriptor(
        rpcName: String = "pkg.Service/Method", verb: String = "PUT", template: String = "/v1/things/{id}", auth: AuthRequirement = .account,
        idempotent: Bool = true, timeout: Duration? = .seconds(5), deprecated: Bool = false,
        bodyType: (any ProtoMessage.Type)? = SendMessageRequest.self, responseType: (any ProtoMessage.Type)? = SendMessageResponse.self,
        grpc: [Int: Int] = [5: 404], versions: ClosedRange<Int>? = 1...2,
        encoding: BodyEncoding = .protobuf, requestType: (any ProtoMessage.Type)? = SendMessageRequest.self
    ) -> EndpointDescriptor {
        EndpointDescriptor(
            rpcName: rpcName, verb: verb, pathTemplate: template, auth: auth, isIdempotent: idempotent, defaultTimeout: timeout,
            isDeprecated: deprecated, requestBodyType: bodyType, responseBodyType: responseType, errorStatusByGRPCCode: grpc,
            versions: versions, encoding: encoding, requestType: requestType)
    }

    @Test func keepsEveryFieldItWasGiven() {
        let endpoint = Self.descriptor()
        let copy = endpoint
        for read in [endpoint, copy] {
            #expect(read.rpcName == "pkg.Service/Method")
            #expect(read.grpcPath == "/pkg.Service/Method")
            #expect(read.verb == "PUT")
            #expect(read.pathTemplate == "/v1/things/{id}")
            #expect(read.auth == .account)
            #expect(read.isIdempotent)
            #expect(read.defaultTimeout == .seconds(5))
            #expect(!read.isDeprecated)
            #expect(read.requestBodyType == SendMessageRequest.self)
            #expect(read.responseBodyType == SendMessageResponse.self)
            #expect(read.errorStatusByGRPCCode == [5: 404])
            #expect(read.versions == 1...2)
            #expect(read.encoding == .protobuf)
            #expect(read.requestType == SendMessageRequest.self)
        }
    }

    @Test func equalityComparesFieldsNotIdentity() {
        let endpoint = Self.descriptor()
        #expect(endpoint == endpoint)
        #expect(endpoint == Self.descriptor())
        #expect(endpoint.hashValue == Self.descriptor().hashValue)
        let different = [
            Self.descriptor(rpcName: "pkg.Service/Other"), Self.descriptor(verb: "POST"), Self.descriptor(template: "/v1/things"),
            Self.descriptor(auth: .none), Self.descriptor(idempotent: false), Self.descriptor(deprecated: true),
            Self.descriptor(bodyType: nil), Self.descriptor(responseType: SendMessageRequest.self),
            Self.descriptor(timeout: nil), Self.descriptor(grpc: [:]), Self.descriptor(versions: nil), Self.descriptor(encoding: .json),
            Self.descriptor(requestType: SendMessageResponse.self),
        ]
        for other in different { #expect(endpoint != other, "\(other)") }
        #expect(Set([endpoint, Self.descriptor()] + different).count == 1 + different.count)
    }
}
