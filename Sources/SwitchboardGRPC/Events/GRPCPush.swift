import Foundation
import SwitchboardRuntime

/// A push as it rides a gRPC event stream: the same request the WebSocket transport's server
/// sends (verb, path, headers, body) with an id for its acknowledgement. On the wire it is the
/// `SwitchboardPush` message that `export-proto` declares:
/// `{ uint64 id = 1; string verb = 2; string path = 3; repeated SwitchboardHeader headers = 4; bytes body = 5; }`
/// with `SwitchboardHeader { string name = 1; string value = 2; }`.
public struct GRPCPush: Sendable, Hashable {
    /// Unique per server; the acknowledgement names it.
    public var id: UInt64
    /// The request pushed.
    public var verb: String
    /// The path pushed to, such as `/api/v1/message`.
    public var path: String
    /// The push's headers.
    public var headers: [(name: String, value: String)]
    /// The payload, in the service's encoding.
    public var body: Data

    /// A push of `request` with `id`.
    public init(id: UInt64, request: ServerRequest) {
        self.id = id
        verb = request.verb
        path = request.path
        headers = request.headers.fields
        body = request.body ?? Data()
    }

    /// The push as the request the generated `dispatch` reads.
    public var request: ServerRequest {
        ServerRequest(verb: verb, path: path, headers: RPCHeaders(headers), body: body.isEmpty ? nil : body)
    }

    public static func == (lhs: GRPCPush, rhs: GRPCPush) -> Bool {
        lhs.id == rhs.id && lhs.verb == rhs.verb && lhs.path == rhs.path && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(path)
    }

    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        ProtobufBytes.varintField(1, id, into: &out)
        ProtobufBytes.bytesField(2, Array(verb.utf8), into: &out)
        ProtobufBytes.bytesField(3, Array(path.utf8), into: &out)
        for header in headers {
            var entry: [UInt8] = []
            ProtobufBytes.bytesField(1, Array(header.name.utf8), into: &entry)
            ProtobufBytes.bytesField(2, Array(header.value.utf8), into: &entry)
            ProtobufBytes.bytesField(4, entry, into: &out, always: true)
        }
        ProtobufBytes.bytesField(5, Array(body), into: &out)
        return out
    }

    /// How many headers the serialized push `bytes` holds, counted by walking its tags without
    /// decoding anything, so what it costs decoded can be charged before it is decoded; `nil`
    /// for bytes that are no well-formed message.
    static func headerCount(inSerialized bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBytes { buffer -> Int? in
            var reader = WireReader(buffer: buffer, options: WireDecodingOptions(discardUnknownFields: true))
            var unknown = UnknownFields()
            var count = 0
            do {
                while let tag = try reader.nextTag() {
                    if tag.fieldNumber == 4 && tag.wireType == .lengthDelimited { count += 1 }
                    try reader.skipField(tag, into: &unknown)
                }
            } catch {
                return nil
            }
            return count
        }
    }

    /// Decodes a push; unknown fields are skipped.
    public init(serializedBytes bytes: [UInt8]) throws(WireDecodingError) {
        id = 0
        verb = ""
        path = ""
        headers = []
        body = Data()
        var decoded = self
        let outcome: Result<Void, WireDecodingError> = bytes.withUnsafeBytes { buffer in Result { () throws(WireDecodingError) in
            // Skipped, not kept: nothing reads them.
            var reader = WireReader(buffer: buffer, options: WireDecodingOptions(discardUnknownFields: true))
            var unknown = UnknownFields()
            while let tag = try reader.nextTag() {
                switch (tag.fieldNumber, tag.wireType) {
                case (1, .varint): decoded.id = try reader.readVarint()
                case (2, .lengthDelimited): decoded.verb = try reader.readString()
                case (3, .lengthDelimited): decoded.path = try reader.readString()
                case (4, .lengthDelimited):
                    let entry = try reader.readLengthDelimited()
                    var inner = WireReader(buffer: entry, options: WireDecodingOptions(discardUnknownFields: true))
                    var name = "", value = ""
                    while let innerTag = try inner.nextTag() {
                        switch (innerTag.fieldNumber, innerTag.wireType) {
                        case (1, .lengthDelimited): name = try inner.readString()
                        case (2, .lengthDelimited): value = try inner.readString()
                        default: try inner.skipField(innerTag, into: &unknown)
                        }
                    }
                    decoded.headers.append((name, value))
                case (5, .lengthDelimited): decoded.body = try reader.readBytes()
                default: try reader.skipField(tag, into: &unknown)
                }
            }
        } }
        try outcome.get()
        self = decoded
    }
}

/// The acknowledgement of a push, the `SwitchboardPushAck` message:
/// `{ uint64 id = 1; int32 status = 2; }`, the status the WebSocket answer would carry.
public struct GRPCPushAcknowledgement: Sendable, Hashable {
    /// The push answered.
    public var id: UInt64
    /// The HTTP-like status (200 when the listener handled it).
    public var status: Int

    /// An acknowledgement of push `id` with `status`.
    public init(id: UInt64, status: Int) {
        self.id = id
        self.status = status
    }

    /// The protobuf encoding.
    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        ProtobufBytes.varintField(1, id, into: &out)
        ProtobufBytes.varintField(2, UInt64(bitPattern: Int64(status)), into: &out)
        return out
    }

    /// Decodes an acknowledgement.
    public init(serializedBytes bytes: [UInt8]) throws(WireDecodingError) {
        var id: UInt64 = 0
        var status = 0
        let outcome: Result<Void, WireDecodingError> = bytes.withUnsafeBytes { buffer in Result { () throws(WireDecodingError) in
            var reader = WireReader(buffer: buffer)
            var unknown = UnknownFields()
            while let tag = try reader.nextTag() {
                switch (tag.fieldNumber, tag.wireType) {
                case (1, .varint): id = try reader.readVarint()
                case (2, .varint): status = Int(Int32(truncatingIfNeeded: try reader.readVarint()))
                default: try reader.skipField(tag, into: &unknown)
                }
            }
        } }
        try outcome.get()
        self.init(id: id, status: status)
    }
}

/// Just enough protobuf writing for the two messages above.
enum ProtobufBytes {
    static func varint(_ value: UInt64, into out: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        out.append(UInt8(value))
    }

    static func varintField(_ number: Int, _ value: UInt64, into out: inout [UInt8]) {
        guard value != 0 else { return }
        varint(UInt64(number << 3), into: &out)
        varint(value, into: &out)
    }

    static func bytesField(_ number: Int, _ bytes: [UInt8], into out: inout [UInt8], always: Bool = false) {
        guard always || !bytes.isEmpty else { return }
        varint(UInt64(number << 3 | 2), into: &out)
        varint(UInt64(bytes.count), into: &out)
        out += bytes
    }
}
