import Foundation

extension ProtoMessage {
    /// Decodes a message from protobuf wire format.
    @inlinable
    public init(
        serializedBytes bytes: some ContiguousBytes,
        options: WireDecodingOptions = .init()
    ) throws(WireDecodingError) {
        let result: Result<Self, WireDecodingError> = bytes.withUnsafeBytes { buffer in
            var reader = WireReader(buffer: buffer, options: options)
            var message = Self()
            do throws(WireDecodingError) {
                try message.decodeFields(from: &reader)
            } catch {
                return .failure(error)
            }
            return .success(message)
        }
        self = try result.get()
    }

    /// Decodes a message from protobuf wire format held in `Data`.
    @inlinable
    public init(serializedData data: Data, options: WireDecodingOptions = .init()) throws(WireDecodingError) {
        try self.init(serializedBytes: data, options: options)
    }

    /// Encodes the message in protobuf wire format.
    @inlinable
    public func serializedBytes() -> [UInt8] {
        let size = serializedSize()
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            guard let base = buffer.baseAddress else { initialized = 0; return }
            var writer = WireWriter(unsafeStart: UnsafeMutableRawPointer(base))
            serialize(into: &writer)
            precondition(writer.bytesWritten == size, "size pass disagreed with write pass")
            initialized = size
        }
    }

    /// Encodes the message in protobuf wire format as `Data`.
    @inlinable
    public func serializedData() -> Data {
        let size = serializedSize()
        var data = Data(count: size)
        data.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var writer = WireWriter(unsafeStart: base)
            serialize(into: &writer)
            precondition(writer.bytesWritten == size, "size pass disagreed with write pass")
        }
        return data
    }
}
