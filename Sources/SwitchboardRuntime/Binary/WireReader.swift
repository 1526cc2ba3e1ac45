import Foundation

/// Reads protobuf wire format from borrowed memory.
///
/// Every length is checked against the bytes that remain before anything is
/// allocated, and nesting is bounded by ``WireDecodingOptions/maximumDepth``,
/// so hostile input fails with a ``WireDecodingError`` instead of trapping.
public struct WireReader {
    @usableFromInline var cursor: UnsafeRawPointer
    @usableFromInline var end: UnsafeRawPointer
    @usableFromInline var fieldStart: UnsafeRawPointer
    @usableFromInline var remainingDepth: Int
    /// The options this decode runs with.
    public let options: WireDecodingOptions

    /// Creates a reader over `buffer`, which must outlive the reader.
    @inlinable
    public init(buffer: UnsafeRawBufferPointer, options: WireDecodingOptions = .init()) {
        let base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 0x10)!
        cursor = base
        end = base + buffer.count
        fieldStart = base
        remainingDepth = options.maximumDepth
        self.options = options
    }

    /// The bytes left to read.
    @inlinable
    public var remaining: Int { end - cursor }

    /// Whether every byte has been read.
    @inlinable
    public var isAtEnd: Bool { cursor >= end }

    // MARK: Tags

    /// Reads the next field tag, or returns `nil` at the end of the current message.
    @inlinable
    public mutating func nextTag() throws(WireDecodingError) -> WireTag? {
        guard cursor < end else { return nil }
        fieldStart = cursor
        let first = cursor.load(as: UInt8.self)
        let raw: UInt64
        if first < 0x80 {
            cursor += 1
            raw = UInt64(first)
        } else {
            raw = try readVarint()
        }
        guard raw <= UInt64(UInt32.max), raw >> 3 != 0 else {
            throw .invalidFieldNumber(raw >> 3)
        }
        let wireType = UInt8(raw & 7)
        guard wireType <= 5 else { throw .invalidWireType(wireType) }
        return WireTag(uncheckedRawValue: UInt32(raw))
    }

    // MARK: Scalars

    /// Reads a base-128 varint of up to ten bytes.
    @inlinable
    public mutating func readVarint() throws(WireDecodingError) -> UInt64 {
        // One-byte varints (small numbers, most tags and lengths) stay inline.
        if cursor < end {
            let byte = cursor.load(as: UInt8.self)
            if byte < 0x80 {
                cursor += 1
                return UInt64(byte)
            }
        }
        return try readMultiByteVarint()
    }

    @usableFromInline
    mutating func readMultiByteVarint() throws(WireDecodingError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard cursor < end else { throw .truncated }
            let byte = cursor.load(as: UInt8.self)
            cursor += 1
            if shift == 63 {
                // The tenth byte ends the varint and gives the top bit; its other bits fall
                // past 64 and are dropped, as protobuf's C++ and swift-protobuf read them.
                guard byte < 0x80 else { throw .malformedVarint }
                return result | UInt64(byte & 1) << 63
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// Reads four little-endian bytes.
    @inlinable
    public mutating func readFixed32() throws(WireDecodingError) -> UInt32 {
        guard end - cursor >= 4 else { throw .truncated }
        let value = cursor.loadUnaligned(as: UInt32.self)
        cursor += 4
        return UInt32(littleEndian: value)
    }

    /// Reads eight little-endian bytes.
    @inlinable
    public mutating func readFixed64() throws(WireDecodingError) -> UInt64 {
        guard end - cursor >= 8 else { throw .truncated }
        let value = cursor.loadUnaligned(as: UInt64.self)
        cursor += 8
        return UInt64(littleEndian: value)
    }

    /// Reads a length prefix and checks it against the remaining input.
    @inlinable
    public mutating func readLength() throws(WireDecodingError) -> Int {
        let length = try readVarint()
        guard length <= UInt64(end - cursor) else {
            throw .lengthExceedsInput(length: length, remaining: end - cursor)
        }
        return Int(length)
    }

    /// Reads a length-delimited payload as borrowed bytes.
    @inlinable
    public mutating func readLengthDelimited() throws(WireDecodingError) -> UnsafeRawBufferPointer {
        let length = try readLength()
        let bytes = UnsafeRawBufferPointer(start: cursor, count: length)
        cursor += length
        return bytes
    }

    /// Reads a length-delimited UTF-8 string.
    @inlinable
    public mutating func readString() throws(WireDecodingError) -> String {
        let bytes = try readLengthDelimited()
        if bytes.isEmpty { return "" }
        guard UTF8Validation.isValid(bytes) else { throw .invalidUTF8(field: currentFieldNumber) }
        return UTF8Validation.string(fromValid: bytes)
    }

    /// The field number of the tag read last; recomputed only on error paths.
    @usableFromInline
    var currentFieldNumber: Int { fieldNumber(at: fieldStart) }

    /// The field number of the tag at `start` (a ``fieldStart`` kept from earlier), for
    /// errors that name an enclosing field: a map's, not its entry's key (1) or value (2).
    @usableFromInline
    func fieldNumber(at start: UnsafeRawPointer) -> Int {
        var probe = self
        probe.cursor = start
        guard let tag = try? probe.nextTag() else { return 0 }
        return tag.fieldNumber
    }

    /// Reads a length-delimited byte string.
    @inlinable
    public mutating func readBytes() throws(WireDecodingError) -> Data {
        let bytes = try readLengthDelimited()
        return bytes.isEmpty ? Data() : Data(bytes: bytes.baseAddress!, count: bytes.count)
    }

    // MARK: Nested messages

    /// Reads a length-delimited message and merges it into `message`, as protobuf does
    /// when a singular message field appears more than once.
    @inlinable
    public mutating func mergeMessage<Message: ProtoMessage>(into message: inout Message) throws(WireDecodingError) {
        let length = try readLength()
        guard remainingDepth > 0 else { throw .nestingTooDeep(limit: options.maximumDepth) }
        let savedEnd = end
        end = cursor + length
        remainingDepth -= 1
        try message.decodeFields(from: &self)
        remainingDepth += 1
        end = savedEnd
    }

    /// Merges the next message into a boxed (recursive) optional field. The box is emptied
    /// first, so the value it held is no longer shared and merges in place: a field repeated
    /// n times on the wire costs O(n), not a copy of everything merged so far each time.
    @inlinable
    public mutating func mergeMessage<Message: ProtoMessage>(into box: inout IndirectBox<Message>?) throws(WireDecodingError) {
        var value = box?.value ?? Message()
        box = nil
        defer { box = IndirectBox(value) }
        try mergeMessage(into: &value)
    }

    /// Runs `body` over the payload of a length-delimited field, as a bounded sub-reader.
    @inlinable
    public mutating func withLengthDelimited<T>(
        _ body: (inout WireReader) throws(WireDecodingError) -> T
    ) throws(WireDecodingError) -> T {
        let length = try readLength()
        guard remainingDepth > 0 else { throw .nestingTooDeep(limit: options.maximumDepth) }
        let savedEnd = end
        end = cursor + length
        remainingDepth -= 1
        let result = try body(&self)
        guard cursor == end else { throw .truncated }
        remainingDepth += 1
        end = savedEnd
        return result
    }

    // MARK: Unknown fields

    /// Skips the value of the field whose tag was just read and, unless the options
    /// discard them, appends the whole field (tag included) to `unknownFields`.
    @inlinable
    public mutating func skipField(_ tag: WireTag, into unknownFields: inout UnknownFields) throws(WireDecodingError) {
        let start = fieldStart
        try skipValue(tag)
        if !options.discardUnknownFields {
            unknownFields.append(UnsafeRawBufferPointer(start: start, count: cursor - start))
        }
    }

    @usableFromInline
    mutating func skipValue(_ tag: WireTag) throws(WireDecodingError) {
        switch tag.wireType {
        case .varint:
            _ = try readVarint()
        case .fixed64:
            guard end - cursor >= 8 else { throw .truncated }
            cursor += 8
        case .fixed32:
            guard end - cursor >= 4 else { throw .truncated }
            cursor += 4
        case .lengthDelimited:
            let length = try readLength()
            cursor += length
        case .startGroup:
            guard remainingDepth > 0 else { throw .nestingTooDeep(limit: options.maximumDepth) }
            remainingDepth -= 1
            while true {
                guard let inner = try nextTag() else { throw .truncated }
                if inner.wireType == .endGroup {
                    guard inner.fieldNumber == tag.fieldNumber else {
                        throw .mismatchedGroup(field: inner.fieldNumber)
                    }
                    break
                }
                try skipValue(inner)
            }
            remainingDepth += 1
        case .endGroup:
            throw .mismatchedGroup(field: tag.fieldNumber)
        }
    }
}
