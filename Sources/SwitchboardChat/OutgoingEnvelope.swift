import Foundation
import SwitchboardRuntime
import SwitchboardWebSocket

/// A `WebSocketMessage` envelope to send, sized first and then written straight into its
/// WebSocket frame: no envelope structs, no `name:value` strings, no intermediate `Data`.
/// Every request and response takes this path, so it writes exactly the bytes the generated
/// `WebSocketMessage` would for the same fields (field order included; the tests compare).
struct OutgoingEnvelope {
    private enum Kind {
        case request(verb: String, path: String, id: UInt64)
        case response(id: UInt64, status: UInt32, message: String)
    }

    /// A body as bytes, or as a message written straight into the frame (its size taken once).
    private enum Body {
        case none
        case bytes(Data)
        case protobuf(ProtobufBodyBox, size: Int)
    }

    private let kind: Kind
    private let headers: RPCHeaders
    private let body: Body
    /// The size of the inner request or response message.
    private let innerSize: Int
    /// The size of the whole envelope.
    let size: Int

    private init(kind: Kind, headers: RPCHeaders, body: Body) {
        self.kind = kind
        self.headers = headers
        self.body = body
        var inner = 0
        switch kind {
        case let .request(verb, path, id):
            inner += 1 + WireSize.lengthDelimited(verb.utf8.count)
            inner += 1 + WireSize.lengthDelimited(path.utf8.count)
            inner += 1 + WireSize.varint(id)
        case let .response(id, status, message):
            inner += 1 + WireSize.varint(id)
            inner += 1 + WireSize.varint(status)
            inner += 1 + WireSize.lengthDelimited(message.utf8.count)
        }
        switch body {
        case .none: break
        case let .bytes(data): inner += 1 + WireSize.lengthDelimited(data.count)
        case let .protobuf(_, size): inner += 1 + WireSize.lengthDelimited(size)
        }
        for field in headers.fields {
            inner += 1 + WireSize.lengthDelimited(Self.lineLength(field))
        }
        innerSize = inner
        // The type (one byte of tag, one of value), then the inner message's tag and length.
        size = 2 + 1 + WireSize.lengthDelimited(inner)
    }

    /// A request with our id.
    static func request(verb: String, path: String, headers: RPCHeaders, body: Data?, id: UInt64) -> OutgoingEnvelope {
        OutgoingEnvelope(kind: .request(verb: verb, path: path, id: id), headers: headers, body: body.map { .bytes($0) } ?? .none)
    }

    /// `request` with our id; a body given as a message is written without making its `Data`.
    static func request(_ request: RPCRequest, id: UInt64) -> OutgoingEnvelope {
        let body: Body = if let box = request.protobufBodyBox {
            .protobuf(box, size: box.serializedSize())
        } else {
            request.body.map { .bytes($0) } ?? .none
        }
        return OutgoingEnvelope(kind: .request(verb: request.verb, path: request.path, id: id), headers: request.headers, body: body)
    }

    /// The answer to request `id`. `message` is always set, because Signal's server closes
    /// with 1007 without it; an empty body is left out.
    static func response(to id: UInt64, _ response: RPCResponse) -> OutgoingEnvelope {
        OutgoingEnvelope(
            kind: .response(id: id, status: UInt32(clamping: max(0, response.status)),
                            message: response.message ?? (response.isSuccess ? "OK" : "Error")),
            headers: response.headers, body: response.body.isEmpty ? .none : .bytes(response.body))
    }

    /// Writes the envelope into `buffer`, which holds exactly ``size`` bytes.
    func write(into buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        var writer = WireWriter(unsafeStart: base)
        writer.writeByte(0x08)
        switch kind {
        case let .request(verb, path, id):
            writer.writeByte(1)
            writer.writeByte(0x12)
            writer.writeVarint(UInt64(innerSize))
            writer.writeByte(0x0A)
            writer.writeString(verb)
            writer.writeByte(0x12)
            writer.writeString(path)
            writeBody(tag: 0x1A, to: &writer)
            writer.writeByte(0x20)
            writer.writeVarint(id)
        case let .response(id, status, message):
            writer.writeByte(2)
            writer.writeByte(0x1A)
            writer.writeVarint(UInt64(innerSize))
            writer.writeByte(0x08)
            writer.writeVarint(id)
            writer.writeByte(0x10)
            writer.writeVarint(status)
            writer.writeByte(0x1A)
            writer.writeString(message)
            writeBody(tag: 0x22, to: &writer)
        }
        // Headers travel as `name:value` lines, written here without building the lines.
        for field in headers.fields {
            writer.writeByte(0x2A)
            writer.writeVarint(UInt64(Self.lineLength(field)))
            Self.writeUTF8(field.name, to: &writer)
            writer.writeByte(UInt8(ascii: ":"))
            Self.writeUTF8(field.value, to: &writer)
        }
        precondition(writer.bytesWritten == size, "envelope size pass disagreed with its write pass")
    }

    private func writeBody(tag: UInt8, to writer: inout WireWriter) {
        switch body {
        case .none:
            return
        case let .bytes(data):
            writer.writeByte(tag)
            writer.writeBytes(data)
        case let .protobuf(message, size):
            writer.writeByte(tag)
            writer.writeLength(size)
            let start = writer.bytesWritten
            message.serialize(into: &writer)
            precondition(writer.bytesWritten - start == size, "size pass disagreed with write pass")
        }
    }

    private static func lineLength(_ field: (name: String, value: String)) -> Int {
        field.name.utf8.count + 1 + field.value.utf8.count
    }

    /// A string's UTF-8 bytes, without a length prefix.
    private static func writeUTF8(_ text: String, to writer: inout WireWriter) {
        let written: Void? = text.utf8.withContiguousStorageIfAvailable { writer.writeRawBytes(UnsafeRawBufferPointer($0)) }
        if written == nil {
            for byte in text.utf8 { writer.writeByte(byte) }
        }
    }
}

extension WebSocketConnection {
    /// Sends an envelope as one binary message, written straight into its frame, without
    /// waiting for the socket (see ``WebSocketConnection/sendWithoutWaiting(binary:)``).
    func sendWithoutWaiting(_ envelope: OutgoingEnvelope) throws(WebSocketError) {
        try sendWithoutWaiting(binaryCount: envelope.size) { envelope.write(into: $0) }
    }
}
