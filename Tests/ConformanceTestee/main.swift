import Foundation
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import TestMessagesProto3

// A testee for protobuf's official conformance runner (conformance/conformance_test_runner):
// it reads length-prefixed `conformance.ConformanceRequest`s from stdin and answers each with
// a `ConformanceResponse` on stdout, using the generated `TestAllTypesProto3` and the runtime's
// binary and JSON codecs. Proto2 messages, JSPB and text format are answered "skipped": the
// schema language is proto3 only. `scripts/conformance.sh` builds the runner and runs this.
// With SWITCHBOARD_CONFORMANCE_SCHEMA set to the schema directory, it answers with the
// dynamic codecs instead (what `switchboard call` and `mock-server` use), driven by the
// schema at run time.
//
// The two envelope messages are read and written by hand, so the testee needs nothing the
// runner is testing.

/// What one request asks for.
struct ConformanceRequest {
    enum Payload { case protobuf([UInt8]), json([UInt8]), unsupported(String) }
    var payload: Payload = .unsupported("no payload")
    var outputFormat = 0
    var messageType = ""
    var category = 0

    init(_ bytes: [UInt8]) throws {
        var reader = Reader(bytes: bytes)
        while !reader.isAtEnd {
            let key = try reader.varint()
            let field = key >> 3, wireType = key & 7
            switch (field, wireType) {
            case (1, 2): payload = .protobuf(try reader.lengthDelimited())
            case (2, 2): payload = .json(try reader.lengthDelimited())
            case (7, 2): payload = .unsupported("JSPB"); _ = try reader.lengthDelimited()
            case (8, 2): payload = .unsupported("text format"); _ = try reader.lengthDelimited()
            case (3, 0): outputFormat = Int(try reader.varint())
            case (4, 2): messageType = String(decoding: try reader.lengthDelimited(), as: UTF8.self)
            case (5, 0): category = Int(try reader.varint())
            default: try reader.skip(wireType: wireType)
            }
        }
    }
}

/// A forward-only protobuf reader for the envelope.
struct Reader {
    struct Malformed: Error {}
    let bytes: [UInt8]
    var offset = 0
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func varint() throws -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            guard offset < bytes.count else { throw Malformed() }
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << UInt64(shift)
            if byte < 0x80 { return value }
        }
        throw Malformed()
    }

    mutating func lengthDelimited() throws -> [UInt8] {
        let length = try varint()
        guard length <= UInt64(bytes.count - offset) else { throw Malformed() }
        defer { offset += Int(length) }
        return Array(bytes[offset..<offset + Int(length)])
    }

    mutating func skip(wireType: UInt64) throws {
        switch wireType {
        case 0: _ = try varint()
        case 1, 5:
            let size = wireType == 1 ? 8 : 4
            guard bytes.count - offset >= size else { throw Malformed() }
            offset += size
        case 2: _ = try lengthDelimited()
        default: throw Malformed()
        }
    }
}

/// The response: one member of its `result` oneof.
enum ConformanceResponse {
    case parseError(String), serializeError(String), runtimeError(String), protobuf([UInt8]), json([UInt8]), skipped(String)

    var serialized: [UInt8] {
        let (field, bytes): (UInt64, [UInt8]) = switch self {
        case let .parseError(text): (1, Array(text.utf8))
        case let .runtimeError(text): (2, Array(text.utf8))
        case let .protobuf(bytes): (3, bytes)
        case let .json(bytes): (4, bytes)
        case let .skipped(text): (5, Array(text.utf8))
        case let .serializeError(text): (6, Array(text.utf8))
        }
        return Self.varint(field << 3 | 2) + Self.varint(UInt64(bytes.count)) + bytes
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var value = value, bytes: [UInt8] = []
        while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
        return bytes + [UInt8(value)]
    }
}

/// The schema-driven codecs, when asked for.
struct DynamicCodecs {
    let binary: DynamicBinaryCodec
    let json: DynamicJSONCodec
    let type: Int

    init?(directory: String) {
        guard let schema = SchemaCompiler.compile(directory: URL(fileURLWithPath: directory)).schema,
              let type = schema.messageIndex(named: TestAllTypesProto3.protoMessageName) else { return nil }
        binary = DynamicBinaryCodec(schema: schema)
        json = DynamicJSONCodec(schema: schema)
        self.type = type
    }

    func answer(_ request: ConformanceRequest) -> ConformanceResponse {
        let message: DynamicMessage
        switch request.payload {
        case let .protobuf(bytes):
            do { message = try binary.decode(Data(bytes), as: type) } catch { return .parseError("\(error)") }
        case let .json(bytes):
            var codec = json
            codec.ignoresUnknownFields = request.category == 3
            do { message = try codec.decode(Data(bytes), as: type) } catch { return .parseError("\(error)") }
        case let .unsupported(kind):
            return .skipped("\(kind) input is not supported")
        }
        switch request.outputFormat {
        case 1: return .protobuf(Array(binary.encode(message)))
        case 2:
            do { return .json(Array(try json.encodeStrictly(message).utf8)) } catch { return .serializeError("\(error)") }
        default: return .skipped("output format \(request.outputFormat) is not supported")
        }
    }
}

let dynamic: DynamicCodecs? = ProcessInfo.processInfo.environment["SWITCHBOARD_CONFORMANCE_SCHEMA"].flatMap { $0.isEmpty ? nil : $0 }.map { directory in
    guard let codecs = DynamicCodecs(directory: directory) else {
        FileHandle.standardError.write(Data("conformance-testee: cannot load the schema in \(directory)\n".utf8))
        exit(1)
    }
    return codecs
}

func answer(_ request: ConformanceRequest) -> ConformanceResponse {
    // The runner first asks for the testee's list of expected failures: none.
    if request.messageType == "conformance.FailureSet" { return .protobuf([]) }
    guard request.messageType == TestAllTypesProto3.protoMessageName else {
        return .skipped("only proto3 messages: \(request.messageType) is not supported")
    }
    if let dynamic { return dynamic.answer(request) }
    let message: TestAllTypesProto3
    switch request.payload {
    case let .protobuf(bytes):
        do { message = try TestAllTypesProto3(serializedBytes: bytes) } catch { return .parseError("\(error)") }
    case let .json(bytes):
        // JSON_IGNORE_UNKNOWN_PARSING_TEST (3) parses with unknown members ignored.
        let options = JSONDecodingOptions(ignoreUnknownFields: request.category == 3)
        do { message = try TestAllTypesProto3(jsonUTF8Bytes: bytes, options: options) } catch { return .parseError("\(error)") }
    case let .unsupported(kind):
        return .skipped("\(kind) input is not supported")
    }
    switch request.outputFormat {
    case 1: return .protobuf(message.serializedBytes())
    case 2:
        do { return .json(try message.jsonUTF8Bytes()) } catch { return .serializeError("\(error)") }
    default: return .skipped("output format \(request.outputFormat) is not supported")
    }
}

/// Reads exactly `count` bytes from stdin; nil at the end of input.
func readExactly(_ count: Int) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
        let got = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress! + filled, count - filled) }
        if got <= 0 { return nil }
        filled += got
    }
    return buffer
}

func writeAll(_ bytes: [UInt8]) {
    var written = 0
    while written < bytes.count {
        let sent = bytes.withUnsafeBytes { write(1, $0.baseAddress! + written, bytes.count - written) }
        if sent <= 0 { exit(1) }
        written += sent
    }
}

AnyTypeRegistry.shared.register(TestAllTypesProto3.self)
while let prefix = readExactly(4) {
    let length = Int(prefix[0]) | Int(prefix[1]) << 8 | Int(prefix[2]) << 16 | Int(prefix[3]) << 24
    guard let body = readExactly(length) else { break }
    let response: ConformanceResponse
    do {
        response = answer(try ConformanceRequest(body))
    } catch {
        response = .runtimeError("the request could not be read")
    }
    let bytes = response.serialized
    let count = UInt32(bytes.count)
    writeAll([UInt8(count & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count >> 16 & 0xFF), UInt8(count >> 24)] + bytes)
}
