/// `count` zero bytes, as a collection that fills a new array in one step.
///
/// `[UInt8](unsafeUninitializedCapacity:)` and `Array(repeating:count:)` allocate through a
/// non-inlinable standard library entry point that looks up `_ContiguousArrayStorage<UInt8>`'s
/// metadata on every call: about 390 instructions, a sixth of an envelope encode.
/// `Array(_:)` over this collection takes the specialised, inlinable path instead, whose
/// metadata access is cached, and `_copyContents(initializing:)` fills it with one `memset`.
@usableFromInline
struct ZeroedBytes: Collection {
    @usableFromInline let count: Int

    @inlinable
    init(count: Int) {
        self.count = count
    }

    @inlinable var startIndex: Int { 0 }
    @inlinable var endIndex: Int { count }
    @inlinable func index(after index: Int) -> Int { index + 1 }
    @inlinable subscript(position: Int) -> UInt8 { 0 }

    @inlinable
    func _copyContents(initializing buffer: UnsafeMutableBufferPointer<UInt8>) -> (IndexingIterator<ZeroedBytes>, Int) {
        let filled = Swift.min(buffer.count, count)
        UnsafeMutableBufferPointer(rebasing: buffer[..<filled]).initialize(repeating: 0)
        return (IndexingIterator(_elements: self, _position: filled), filled)
    }

    /// A new array of `count` zero bytes.
    @inlinable
    static func array(count: Int) -> [UInt8] {
        count > 0 ? Array(ZeroedBytes(count: count)) : []
    }
}
