/// A new `[UInt8]` of `count` bytes whose contents the caller writes in full before anyone
/// reads them: the encoder's output buffer.
///
/// `[UInt8](unsafeUninitializedCapacity:)` and `Array(repeating:count:)` allocate through a
/// non-inlinable standard library entry point that looks up `_ContiguousArrayStorage<UInt8>`'s
/// metadata on every call: about 390 instructions, a sixth of an envelope encode.
/// `Array(_:)` over this collection takes the specialised, inlinable path instead, whose
/// metadata access is cached. Its `_copyContents(initializing:)` leaves the bytes as the
/// allocator gave them: zeroing them first (a `memset` of the whole message) was about 40
/// instructions of a 1,750-instruction envelope encode, and every byte is written right after.
/// `UInt8` is trivial, so the bytes need no initialization to be valid; the one caller checks
/// that its writer covered all of them (``ProtoMessage/serializedBytes()``'s precondition)
/// before the array leaves it.
@usableFromInline
struct UnfilledBytes: Collection {
    @usableFromInline let count: Int

    @inlinable
    init(count: Int) {
        self.count = count
    }

    @inlinable var startIndex: Int { 0 }
    @inlinable var endIndex: Int { count }
    @inlinable func index(after index: Int) -> Int { index + 1 }
    /// Never read by the one caller (which writes every byte); zero for anyone who iterates.
    @inlinable subscript(position: Int) -> UInt8 { 0 }

    @inlinable
    func _copyContents(initializing buffer: UnsafeMutableBufferPointer<UInt8>) -> (IndexingIterator<UnfilledBytes>, Int) {
        let filled = Swift.min(buffer.count, count)
        return (IndexingIterator(_elements: self, _position: filled), filled)
    }

    /// A new array of `count` bytes for the caller to overwrite entirely.
    @inlinable
    static func array(count: Int) -> [UInt8] {
        precondition(count >= 0, "a negative byte count")
        return count > 0 ? Array(UnfilledBytes(count: count)) : []
    }
}
