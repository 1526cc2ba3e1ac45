import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// libsignal's published request vectors (swift/Tests/LibSignalClientTests/ChatServiceTests.swift).
@Suite struct EnvelopeVectorTests {
    @Test func incomingMessageVector() throws {
        let bytes = try #require(Data(base64Encoded: "CgNQVVQSDy9hcGkvdjEvbWVzc2FnZRoI6AMAAAAAAAAqF3gtc2lnbmFsLXRpbWVzdGFtcDoxMDAwIAE="))
        let request = try WebSocketRequestMessage(serializedData: bytes)
        #expect(request.verb == "PUT")
        #expect(request.path == "/api/v1/message")
        #expect(request.body == Data([0xE8, 0x03, 0, 0, 0, 0, 0, 0]))
        #expect(request.headers == ["x-signal-timestamp:1000"])
        #expect(request.id == 1)
        #expect(request.unknownFields.isEmpty)
        // libsignal wrote headers (5) before id (4); we write in key order, like protoc.
        let reencoded = try WebSocketRequestMessage(serializedData: request.serializedData())
        #expect(reencoded == request)
    }

    @Test func queueEmptyVector() throws {
        let bytes = try #require(Data(base64Encoded: "CgNQVVQSEy9hcGkvdjEvcXVldWUvZW1wdHkgYw=="))
        let request = try WebSocketRequestMessage(serializedData: bytes)
        #expect(request.verb == "PUT")
        #expect(request.path == "/api/v1/queue/empty")
        #expect(request.body == nil)
        #expect(request.headers.isEmpty)
        #expect(request.id == 99)
        // Key order matches this vector's order, so it re-encodes byte for byte.
        #expect(request.serializedData() == bytes)
    }

    /// Explicit presence keeps id 0 and an empty message, which Signal's server requires.
    @Test func responseKeepsZeroIdAndReasonPhrase() throws {
        let response = WebSocketResponseMessage(id: 0, status: 200, message: "OK")
        let frame = WebSocketMessage(type: .response, response: response)
        let decoded = try WebSocketMessage(serializedBytes: frame.serializedBytes())
        #expect(decoded.response?.id == 0)
        #expect(decoded.response?.message == "OK")
        #expect(frame.serializedBytes() == [0x08, 0x02, 0x1A, 0x09, 0x08, 0x00, 0x10, 0xC8, 0x01, 0x1A, 0x02, 0x4F, 0x4B])
    }
}
