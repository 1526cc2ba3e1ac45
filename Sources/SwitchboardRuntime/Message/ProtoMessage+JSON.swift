import Foundation

extension ProtoMessage {
    /// Decodes a message from canonical protobuf JSON (UTF-8 bytes).
    public init(
        jsonUTF8Bytes bytes: some ContiguousBytes,
        options: JSONDecodingOptions = .init()
    ) throws(JSONDecodingError) {
        var message = Self()
        var failure: JSONDecodingError?
        bytes.withUnsafeBytes { buffer in
            var reader = JSONReader(buffer: buffer, options: options)
            do throws(JSONDecodingError) {
                try message.decodeJSON(from: &reader)
                try reader.expectEnd()
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        self = message
    }

    /// Decodes a message from canonical protobuf JSON text.
    public init(jsonString: String, options: JSONDecodingOptions = .init()) throws(JSONDecodingError) {
        try self.init(jsonUTF8Bytes: Array(jsonString.utf8), options: options)
    }

    /// Encodes the message as canonical protobuf JSON (UTF-8 bytes).
    public func jsonUTF8Bytes() throws(JSONEncodingError) -> [UInt8] {
        var writer = JSONWriter()
        try encodeJSON(into: &writer)
        return writer.bytes
    }

    /// Encodes the message as canonical protobuf JSON text.
    public func jsonString() throws(JSONEncodingError) -> String {
        String(decoding: try jsonUTF8Bytes(), as: UTF8.self)
    }

    /// Decodes a message from canonical protobuf JSON in `Data`, as swift-protobuf's
    /// `init(jsonUTF8Data:options:)` does.
    public init(jsonUTF8Data data: Data, options: JSONDecodingOptions = .init()) throws(JSONDecodingError) {
        try self.init(jsonUTF8Bytes: data, options: options)
    }

    /// Encodes the message as canonical protobuf JSON in `Data`, as swift-protobuf's
    /// `jsonUTF8Data()` does.
    public func jsonUTF8Data() throws(JSONEncodingError) -> Data {
        Data(try jsonUTF8Bytes())
    }
}
