/// New byte arrays for writers that fill every byte at once: a WebSocket frame, a framed gRPC
/// message.
///
/// `[UInt8](unsafeUninitializedCapacity:initializingWith:)` and `[UInt8](repeating:count:)`
/// allocate through a standard library entry point that is not specialized: it looks
/// `_ContiguousArrayStorage<UInt8>`'s metadata up in the runtime's cache on every call, about
/// 500 instructions a buffer (two buffers a WebSocket call, two a gRPC call, measured with
/// callgrind). `Array(_:)` over a collection defined here is specialized in this module, where
/// that metadata access is cached, and the collection does not write its bytes: the caller
/// does. (The generated code's encoder has its own copy of this in `SwitchboardRuntime`, which
/// does not depend on this module.)
package enum UnfilledByteArray {
    /// A new array of `count` bytes whose contents are unspecified until the caller writes
    /// them; the caller must write every byte before any is read or sent.
    package static func make(count: Int) -> [UInt8] {
        precondition(count >= 0, "a negative byte count")
        return count > 0 ? Array(Bytes(count: count)) : []
    }

    /// `count` bytes that `Array(_:)` allocates without filling (`UInt8` needs no
    /// initialization to be valid).
    private struct Bytes: Collection {
        let count: Int
        var startIndex: Int { 0 }
        var endIndex: Int { count }
        func index(after index: Int) -> Int { index + 1 }
        /// Only for iteration outside `Array(_:)`, which nothing here does.
        subscript(position: Int) -> UInt8 { 0 }

        func _copyContents(initializing buffer: UnsafeMutableBufferPointer<UInt8>) -> (IndexingIterator<Bytes>, Int) {
            let filled = Swift.min(buffer.count, count)
            return (IndexingIterator(_elements: self, _position: filled), filled)
        }
    }
}
