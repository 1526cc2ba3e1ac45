import Foundation

/// Builds small `Data` values by filling a stack buffer and copying it in.
///
/// `Data(bytes:count:)` then makes one allocation for its storage (none up to its inline 14
/// bytes); handing `Data` memory of ours instead (`bytesNoCopy`) costs a second object for the
/// deallocator, and building an array first costs an allocation and a copy more. Up to
/// ``limit`` bytes the copy is cheaper than either. Used by `serializedData()` and base64
/// decoding.
@usableFromInline
enum StackBufferedData {
    /// The most bytes built on the stack: 1 KiB.
    @inlinable
    static var limit: Int { 1024 }

    /// Lets `fill` write `count` bytes (at most ``limit``) into a stack buffer and returns them
    /// as `Data`, or `nil` when `fill` returns `false`.
    @inlinable
    static func make(count: Int, _ fill: (UnsafeMutableRawPointer) -> Bool) -> Data? {
        precondition(count >= 0 && count <= limit, "\(count) bytes do not fit the stack buffer")
        return withUnsafeTemporaryAllocation(byteCount: limit, alignment: 8) { buffer in
            guard let base = buffer.baseAddress, fill(base) else { return nil }
            return Data(bytes: base, count: count)
        }
    }
}
