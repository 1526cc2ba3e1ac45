import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardChat
import SwitchboardRuntime
import Testing

/// The chat layer writes and reads envelopes without the generated `WebSocketMessage`; these
/// tests hold both directions to the generated code's bytes and decoding, on random input.
@Suite struct EnvelopeCodecTests {
    // MARK: Random input

    private static let textPieces = ["", "a", "GET", "/v1/messages/+15551234567?story=true", "é", "😀", " ", "\t", ":", "\u{00A0}",
                                     "Content-Type", "application/x-protobuf", String(repeating: "x", count: 200)]

    private static func text(_ generator: inout some RandomNumberGenerator) -> String {
        (0..<Int.random(in: 0...3, using: &generator)).map { _ in textPieces.randomElement(using: &generator)! }.joined()
    }

    private static func headers(_ generator: inout some RandomNumberGenerator) -> RPCHeaders {
        var headers = RPCHeaders()
        for _ in 0..<Int.random(in: 0...4, using: &generator) { headers.add(text(&generator), text(&generator)) }
        return headers
    }

    private static func body(_ generator: inout some RandomNumberGenerator) -> Data? {
        switch Int.random(in: 0...3, using: &generator) {
        case 0: return nil
        case 1: return Data()
        case 2: return Data((0..<Int.random(in: 1...20, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        default: return Data(count: Int.random(in: 100...300, using: &generator))
        }
    }

    private static func id(_ generator: inout some RandomNumberGenerator) -> UInt64 {
        [0, 1, 127, 128, 300, UInt64.max, UInt64.random(in: 0...UInt64.max, using: &generator)].randomElement(using: &generator)!
    }

    private static func lines(_ headers: RPCHeaders) -> [String] { headers.map { "\($0.name):\($0.value)" } }

    private static func bytes(of envelope: OutgoingEnvelope) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: envelope.size) { buffer, initialized in
            envelope.write(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = envelope.size
        }
    }

    // MARK: Writing

    @Test func requestsAreWrittenAsTheGeneratedMessageWritesThem() {
        var generator = SeededGenerator(seed: 0x5EED0003)
        for _ in 0..<2000 {
            let (verb, path, headers, body, id) = (Self.text(&generator), Self.text(&generator), Self.headers(&generator),
                                                   Self.body(&generator), Self.id(&generator))
            let ours = Self.bytes(of: .request(verb: verb, path: path, headers: headers, body: body, id: id))
            let generated = WebSocketMessage(type: .request, request: WebSocketRequestMessage(
                verb: verb, path: path, body: body, headers: Self.lines(headers), id: id)).serializedBytes()
            #expect(ours == generated, "\(verb) \(path) \(headers) \(String(describing: body)) \(id)")
        }
    }

    /// A body given as a message is written straight into the frame, as the bytes the
    /// generated envelope holds for its encoding (sizes either side of each prefix width).
    @Test func aMessageBodyIsWrittenAsItsEncoding() {
        var generator = SeededGenerator(seed: 0x5EED0004)
        for contentSize in [0, 1, 100, 120, 121, 122, 200, 16_370, 16_380, 70_000] {
            let body = SendMessageRequest(destination: Self.text(&generator), timestamp: Date(timeIntervalSince1970: 1_700_000_000),
                                          messages: [OutgoingMessage(type: .ciphertext, destinationDeviceId: 1,
                                                                     content: Data(count: contentSize))], urgent: true)
            let request = RPCRequest(endpoint: Messages.sendMessage, path: "/v1/messages/x", headers: Self.headers(&generator),
                                     protobufBody: body)
            #expect(request.protobufBody != nil)
            #expect(request.body == body.serializedData(), "`body` still gives the bytes")
            let ours = Self.bytes(of: .request(request, id: 7))
            let generated = WebSocketMessage(type: .request, request: WebSocketRequestMessage(
                verb: "PUT", path: "/v1/messages/x", body: body.serializedData(), headers: Self.lines(request.headers), id: 7)).serializedBytes()
            #expect(ours == generated, "content of \(contentSize) bytes")
            // Setting `body` replaces the message.
            var replaced = request
            replaced.body = Data([1, 2, 3])
            #expect(replaced.protobufBody == nil)
            #expect(Self.bytes(of: .request(replaced, id: 7)) == WebSocketMessage(type: .request, request: WebSocketRequestMessage(
                verb: "PUT", path: "/v1/messages/x", body: Data([1, 2, 3]), headers: Self.lines(request.headers), id: 7)).serializedBytes())
        }
    }

    @Test func responsesAreWrittenAsTheGeneratedMessageWritesThem() {
        var generator = SeededGenerator(seed: 0x5EED0005)
        let statuses = [-5, 0, 200, 204, 404, 500, 4409, Int(UInt32.max) + 10]
        let messages: [String?] = [nil, "OK", "", "Not Found", "é"]
        for _ in 0..<2000 {
            let response = RPCResponse(status: statuses.randomElement(using: &generator)!, headers: Self.headers(&generator),
                                       body: Self.body(&generator) ?? Data(), message: messages.randomElement(using: &generator)!)
            let id = Self.id(&generator)
            let ours = Self.bytes(of: .response(to: id, response))
            let generated = WebSocketMessage(type: .response, response: WebSocketResponseMessage(
                id: id, status: UInt32(clamping: max(0, response.status)),
                message: response.message ?? (response.isSuccess ? "OK" : "Error"),
                headers: Self.lines(response.headers), body: response.body.isEmpty ? nil : response.body)).serializedBytes()
            #expect(ours == generated, "\(response) \(id)")
        }
    }

    @Test func aResponseAlwaysCarriesItsMessage() throws {
        let envelope = try IncomingEnvelope(serializedData: Data(Self.bytes(of: .response(to: 7, RPCResponse(status: 200)))))
        #expect(envelope.type == .response)
        #expect(envelope.response?.message == "OK")
        #expect(envelope.response?.id == 7)
        #expect(envelope.response?.body == nil)
        let failed = try IncomingEnvelope(serializedData: Data(Self.bytes(of: .response(to: 8, RPCResponse(status: 500)))))
        #expect(failed.response?.message == "Error")
    }

    // MARK: Reading

    /// What the chat layer takes from an envelope, as the generated decoder and
    /// `EnvelopeHeaders.decode` produce it.
    private struct Decoded: Equatable, CustomStringConvertible {
        var type: IncomingEnvelope.Kind?
        var request: [String?]?
        var requestBody: Data?
        var requestID: UInt64?
        var requestHeaders: RPCHeaders?
        var response: [String?]?
        var responseBody: Data?
        var responseID: UInt64?
        var responseStatus: UInt32?
        var responseHeaders: RPCHeaders?

        init(_ message: WebSocketMessage) {
            type = message.type.map { IncomingEnvelope.Kind(rawValue: $0.rawValue) }
            if let request = message.request {
                self.request = [request.verb, request.path]
                (requestBody, requestID, requestHeaders) = (request.body, request.id, EnvelopeHeaders.decode(request.headers))
            }
            if let response = message.response {
                self.response = [response.message]
                (responseBody, responseID, responseStatus) = (response.body, response.id, response.status)
                responseHeaders = EnvelopeHeaders.decode(response.headers)
            }
        }

        init(_ envelope: IncomingEnvelope) {
            type = envelope.type
            if let request = envelope.request {
                self.request = [request.verb, request.path]
                (requestBody, requestID, requestHeaders) = (request.body, request.id, request.headers)
            }
            if let response = envelope.response {
                self.response = [response.message]
                (responseBody, responseID, responseStatus) = (response.body, response.id, response.status.map { UInt32(truncatingIfNeeded: $0) })
                responseHeaders = response.headers
            }
        }

        var description: String {
            "type \(String(describing: type)) request \(String(describing: request)) \(String(describing: requestHeaders)) response \(String(describing: response)) \(String(describing: responseHeaders))"
        }
    }

    private static func bothDecoders(_ bytes: [UInt8]) -> (ours: Result<Decoded, WireDecodingError>, generated: Result<Decoded, WireDecodingError>) {
        let ours = Result { () throws(WireDecodingError) in Decoded(try IncomingEnvelope(serializedData: Data(bytes))) }
        let generated = Result { () throws(WireDecodingError) in Decoded(try WebSocketMessage(serializedBytes: bytes)) }
        return (ours, generated)
    }

    /// Envelopes the writer above never makes: fields in any order, repeated, unknown, a
    /// type the schema does not name, both inner messages, or neither.
    private static func oddEnvelope(_ generator: inout some RandomNumberGenerator) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<Int.random(in: 0...4, using: &generator) {
            switch Int.random(in: 0...5, using: &generator) {
            case 0:
                bytes += WebSocketMessage(type: WebSocketMessage.TypeEnum(rawValue: Int32.random(in: -1...3, using: &generator))).serializedBytes()
            case 1, 2:
                bytes += WebSocketMessage(request: WebSocketRequestMessage(
                    verb: Bool.random(using: &generator) ? text(&generator) : nil, path: Bool.random(using: &generator) ? text(&generator) : nil,
                    body: body(&generator), headers: lines(headers(&generator)) + ["no colon", " \u{3000}X :\u{00A0}v "],
                    id: Bool.random(using: &generator) ? id(&generator) : nil)).serializedBytes()
            case 3, 4:
                bytes += WebSocketMessage(response: WebSocketResponseMessage(
                    id: Bool.random(using: &generator) ? id(&generator) : nil, status: UInt32.random(in: 0...600, using: &generator),
                    message: Bool.random(using: &generator) ? text(&generator) : nil, headers: lines(headers(&generator)),
                    body: body(&generator))).serializedBytes()
            default:
                // Unknown fields of every wire type, at the top level.
                bytes += [0x20, 0x05, 0x29, 1, 2, 3, 4, 5, 6, 7, 8, 0x32, 0x02, 0xAA, 0xBB, 0x3D, 1, 2, 3, 4]
            }
        }
        return bytes
    }

    @Test func readingAgreesWithTheGeneratedDecoder() {
        var generator = SeededGenerator(seed: 0x5EED0006)
        for _ in 0..<3000 {
            let bytes = Self.oddEnvelope(&generator)
            let (ours, generated) = Self.bothDecoders(bytes)
            #expect(ours == generated, "\(bytes)")
        }
    }

    @Test func damagedEnvelopesFailOrDecodeAsTheGeneratedDecoderDoes() {
        var generator = SeededGenerator(seed: 0x5EED0007)
        var failures = 0
        for _ in 0..<5000 {
            var bytes = Self.oddEnvelope(&generator)
            guard !bytes.isEmpty else { continue }
            switch Int.random(in: 0...2, using: &generator) {
            case 0: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            case 1: bytes.removeLast(Int.random(in: 1...bytes.count, using: &generator))
            default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0...bytes.count, using: &generator))
            }
            let (ours, generated) = Self.bothDecoders(bytes)
            #expect(ours == generated, "\(bytes)")
            if case .failure = ours { failures += 1 }
        }
        // The damage must actually reach the error paths, or this test proves nothing.
        #expect(failures > 500)
    }

    @Test func invalidUTF8InAHeaderIsAnError() {
        // A request whose only header line is the bytes FF FE.
        let bytes: [UInt8] = [0x08, 0x01, 0x12, 0x04, 0x2A, 0x02, 0xFF, 0xFE]
        let (ours, generated) = Self.bothDecoders(bytes)
        #expect(ours == .failure(.invalidUTF8(field: 5)))
        #expect(generated == ours)
    }
}
