import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ProtoMessage {
    /// Decodes a message from protobuf wire format.
    @inlinable
    public init(
        serializedBytes bytes: some ContiguousBytes,
        options: WireDecodingOptions = .init()
    ) throws(WireDecodingError) {
        var decoded: Self?
        var failure: WireDecodingError?
        bytes.withUnsafeBytes { buffer in
            do throws(WireDecodingError) {
                decoded = try Self.decode(from: buffer, options: options)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        // `take()` moves the message out instead of copying every field.
        self = decoded.take()!
    }

    @inlinable
    static func decode(from buffer: UnsafeRawBufferPointer, options: WireDecodingOptions) throws(WireDecodingError) -> Self {
        var reader = WireReader(buffer: buffer, options: options)
        var message = Self()
        try message.decodeFields(from: &reader)
        return message
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
        // Every byte is written below before the array is returned (the precondition checks it).
        var bytes = UnfilledBytes.array(count: size)
        bytes.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var writer = WireWriter(unsafeStart: base)
            serialize(into: &writer)
            precondition(writer.bytesWritten == size, "size pass disagreed with write pass")
        }
        return bytes
    }

    /// Encodes the message in protobuf wire format as `Data`.
    @inlinable
    public func serializedData() -> Data {
        let size = serializedSize()
        guard size > 0 else { return Data() }
        // Up to 1 KiB: written on the stack and copied in (see `StackBufferedData`).
        if size <= StackBufferedData.limit {
            return StackBufferedData.make(count: size) { base in
                var writer = WireWriter(unsafeStart: base)
                serialize(into: &writer)
                precondition(writer.bytesWritten == size, "size pass disagreed with write pass")
                return true
            }!
        }
        // Written before `Data` owns it: `Data(count:)` zeroes its storage and each
        // `withUnsafeMutableBytes` pays exclusivity checks on its class storage, which
        // together cost more than the encode itself.
        // `malloc`, not `UnsafeMutableRawPointer.allocate`, which asks for the default
        // alignment and so goes through `posix_memalign`.
        guard let base = malloc(size) else { fatalError("out of memory encoding \(size) bytes") }
        var writer = WireWriter(unsafeStart: base)
        serialize(into: &writer)
        precondition(writer.bytesWritten == size, "size pass disagreed with write pass")
        return Data(bytesNoCopy: base, count: size, deallocator: .free)
    }
}
