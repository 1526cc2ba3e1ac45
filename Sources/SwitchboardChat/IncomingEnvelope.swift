import Foundation
import SwitchboardRuntime

/// A received `WebSocketMessage` envelope, read straight from the frame's bytes into what
/// the chat layer uses: header lines become ``RPCHeaders`` as they are read, without the
/// envelope structs or the `[String]` of lines in between.
///
/// It decodes exactly as the generated `WebSocketMessage` does (the tests compare the two
/// on random and mutated envelopes): the last value of a field wins, a repeated inner
/// message merges into the first, unknown fields and known ones with the wrong wire type are
/// skipped, and invalid UTF-8 is an error. (The response status alone is kept whole.)
struct IncomingEnvelope {
    /// The inner request's fields, each `nil` when absent.
    struct Request {
        var verb: String?
        var path: String?
        var body: Data?
        var headers = RPCHeaders()
        var id: UInt64?
    }

    /// The inner response's fields, each `nil` when absent.
    struct Response {
        var id: UInt64?
        /// Read whole, not truncated to 32 bits as the generated decoder would: a status
        /// above 2^32 must not pass for a small one.
        var status: UInt64?
        var message: String?
        var body: Data?
        var headers = RPCHeaders()
    }

    /// `status` as an HTTP status (100 to 599), or `nil` for anything else.
    static func httpStatus(_ status: UInt64) -> Int? {
        (100...599).contains(status) ? Int(status) : nil
    }

    /// The envelope's type field: what the frame carries.
    enum Kind: Equatable {
        case unknown
        case request
        case response
        /// A value this reader does not know.
        case unrecognized(Int32)

        init(rawValue: Int32) {
            switch rawValue {
            case 0: self = .unknown
            case 1: self = .request
            case 2: self = .response
            default: self = .unrecognized(rawValue)
            }
        }
    }

    /// The envelope's type.
    var type: Kind?
    var request: Request?
    var response: Response?

    /// Decodes an envelope.
    init(serializedData data: Data) throws(WireDecodingError) {
        self = try Self.decode(from: data)
    }

    /// Decodes an envelope from a frame's bytes where they lie.
    init(serializedBytes bytes: ArraySlice<UInt8>) throws(WireDecodingError) {
        self = try Self.decode(from: bytes)
    }

    private static func decode(from bytes: some ContiguousBytes) throws(WireDecodingError) -> IncomingEnvelope {
        let decoded = bytes.withUnsafeBytes { bytes in
            Result { () throws(WireDecodingError) in try decode(bytes) }
        }
        return try decoded.get()
    }

    private init(type: Kind?, request: Request?, response: Response?) {
        (self.type, self.request, self.response) = (type, request, response)
    }

    /// The inner messages are decoded into plain locals and wrapped once at the end: writing
    /// through an optional's payload copies the whole struct on each field.
    private static func decode(_ bytes: UnsafeRawBufferPointer) throws(WireDecodingError) -> IncomingEnvelope {
        // Unknown fields are skipped, never kept: nothing re-encodes this envelope.
        var reader = WireReader(buffer: bytes, options: WireDecodingOptions(discardUnknownFields: true))
        var ignored = UnknownFields()
        var type: Kind?
        var request = Request(), response = Response()
        var hasRequest = false, hasResponse = false
        while let tag = try reader.nextTag() {
            switch tag.rawValue {
            case 0x08:
                type = Kind(rawValue: Int32(truncatingIfNeeded: try reader.readVarint()))
            case 0x12:
                hasRequest = true
                try reader.withLengthDelimited { (inner: inout WireReader) throws(WireDecodingError) in
                    try decode(&request, from: &inner)
                }
            case 0x1A:
                hasResponse = true
                try reader.withLengthDelimited { (inner: inout WireReader) throws(WireDecodingError) in
                    try decode(&response, from: &inner)
                }
            default:
                try reader.skipField(tag, into: &ignored)
            }
        }
        return IncomingEnvelope(type: type, request: hasRequest ? request : nil, response: hasResponse ? response : nil)
    }

    private static func decode(_ request: inout Request, from reader: inout WireReader) throws(WireDecodingError) {
        var ignored = UnknownFields()
        while let tag = try reader.nextTag() {
            switch tag.rawValue {
            case 0x0A: request.verb = try StringCodec.read(from: &reader)
            case 0x12: request.path = try StringCodec.read(from: &reader)
            case 0x1A: request.body = try BytesCodec.read(from: &reader)
            case 0x20: request.id = try UInt64Codec.read(from: &reader)
            case 0x2A: try readHeader(from: &reader, into: &request.headers)
            default: try reader.skipField(tag, into: &ignored)
            }
        }
    }

    private static func decode(_ response: inout Response, from reader: inout WireReader) throws(WireDecodingError) {
        var ignored = UnknownFields()
        while let tag = try reader.nextTag() {
            switch tag.rawValue {
            case 0x08: response.id = try UInt64Codec.read(from: &reader)
            case 0x10: response.status = try reader.readVarint()
            case 0x1A: response.message = try StringCodec.read(from: &reader)
            case 0x22: response.body = try BytesCodec.read(from: &reader)
            case 0x2A: try readHeader(from: &reader, into: &response.headers)
            default: try reader.skipField(tag, into: &ignored)
            }
        }
    }

    /// One `name:value` line (field 5 of both inner messages), validated as the generated
    /// string field would be, then split and trimmed into `headers`.
    private static func readHeader(from reader: inout WireReader, into headers: inout RPCHeaders) throws(WireDecodingError) {
        let line = try reader.readLengthDelimited()
        guard UTF8Validation.isValid(line) else { throw .invalidUTF8(field: 5) }
        // Requests and responses carry a few headers: one allocation for them all.
        if headers.fields.isEmpty { headers.reserveCapacity(4) }
        EnvelopeHeaders.add(line: line, to: &headers)
    }
}
