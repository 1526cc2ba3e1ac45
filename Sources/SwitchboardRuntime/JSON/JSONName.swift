import Foundation

/// A JSON string read as a member name or enum name, borrowed from the input
/// when it holds no escapes so that matching it allocates nothing.
public struct JSONName {
    @usableFromInline let pointer: UnsafeRawPointer?
    @usableFromInline let count: Int
    @usableFromInline let unescaped: [UInt8]?

    @inlinable
    init(borrowing pointer: UnsafeRawPointer, count: Int) {
        self.pointer = pointer
        self.count = count
        self.unescaped = nil
    }

    @inlinable
    init(unescaped: [UInt8]) {
        self.pointer = nil
        self.count = unescaped.count
        self.unescaped = unescaped
    }

    /// Whether the name equals `candidate`, byte for byte.
    @inlinable
    public func matches(_ candidate: StaticString) -> Bool {
        guard candidate.utf8CodeUnitCount == count else { return false }
        if let pointer {
            return memcmp(pointer, candidate.utf8Start, count) == 0
        }
        return unescaped!.withUnsafeBytes { memcmp($0.baseAddress!, candidate.utf8Start, count) == 0 }
    }

    /// The name as a string, for error messages.
    public var string: String {
        if let pointer {
            return String(decoding: UnsafeRawBufferPointer(start: pointer, count: count), as: UTF8.self)
        }
        return String(decoding: unescaped!, as: UTF8.self)
    }

    /// Calls `body` with the name's bytes.
    @inlinable
    public func withUnsafeBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        if let pointer { return try body(UnsafeRawBufferPointer(start: pointer, count: count)) }
        return try unescaped!.withUnsafeBytes(body)
    }
}
