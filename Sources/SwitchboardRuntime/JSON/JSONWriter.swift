import Foundation

/// Writes canonical protobuf JSON as UTF-8 bytes.
///
/// Generated code writes member names as precomputed `"name":` literals, and the
/// writer tracks only whether a comma is due, so no stack or allocation per field.
public struct JSONWriter {
    /// The UTF-8 bytes written so far.
    public var bytes: [UInt8] { output }
    @usableFromInline var output: [UInt8]
    @usableFromInline var needsComma = false
    /// The types a `google.protobuf.Any` may hold, to write its fields.
    public var anyTypes: AnyTypeRegistry = .shared
    /// The most `google.protobuf.Any`s written inside one another (100 by default); deeper
    /// ones fail with ``JSONEncodingError/invalidAny(typeURL:reason:)``. An `Any`'s value is
    /// opaque bytes that binary decoding does not open, so its nesting is bounded here
    /// and by ``maximumDepth``.
    public var maximumAnyDepth = 100
    /// How many `Any`s enclose what is being written now.
    @usableFromInline var anyDepth = 0
    /// The type URL of the innermost `Any` being written, for its errors.
    @usableFromInline var anyTypeURL = ""
    /// The deepest nesting of objects and arrays an `Any`'s packed message is written within
    /// (100 by default, as JSON reading allows). Its bytes are decoded with only the levels
    /// left below the `Any`, so nesting stays bounded across `Any`s, not 100 levels again
    /// inside each; past it, writing fails with ``JSONEncodingError/invalidAny(typeURL:reason:)``.
    public var maximumDepth = 100
    /// How many objects and arrays enclose what is being written now.
    @usableFromInline var depth = 0
    /// The most objects and arrays that enclosed anything written since it was last set: an
    /// `Any` holds its packed message's JSON to ``maximumDepth`` with it.
    @usableFromInline var deepest = 0

    /// Inside an `Any`, what a message past ``maximumDepth`` fails with.
    @usableFromInline var tooDeepInAny: JSONEncodingError {
        .invalidAny(typeURL: anyTypeURL, reason: "its message would nest deeper than \(maximumDepth) objects and arrays")
    }

    /// Creates a writer, reserving `capacity` bytes.
    @inlinable
    public init(capacity: Int = 256) {
        output = []
        output.reserveCapacity(capacity)
    }

    // MARK: Structure

    /// Opens an object; its first member needs no comma.
    @inlinable
    public mutating func beginObject() {
        output.append(UInt8(ascii: "{"))
        needsComma = false
        depth += 1
        if depth > deepest { deepest = depth }
    }

    /// Closes an object; a comma is then due before the next member or element.
    @inlinable
    public mutating func endObject() {
        output.append(UInt8(ascii: "}"))
        needsComma = true
        depth -= 1
    }

    /// Opens an array; each element starts with ``beginElement()``.
    @inlinable
    public mutating func beginArray() {
        output.append(UInt8(ascii: "["))
        needsComma = false
        depth += 1
        if depth > deepest { deepest = depth }
    }

    /// Closes an array; a comma is then due before the next member or element.
    @inlinable
    public mutating func endArray() {
        output.append(UInt8(ascii: "]"))
        needsComma = true
        depth -= 1
    }

    /// Starts an array element, writing the separating comma when one is due.
    @inlinable
    public mutating func beginElement() {
        if needsComma { output.append(UInt8(ascii: ",")) }
        needsComma = false
    }

    /// Writes a member name given as a literal that already holds the quotes and colon,
    /// such as `"\"id\":"`; generated code precomputes these.
    @inlinable
    public mutating func writeKeyLiteral(_ quotedKeyAndColon: StaticString) {
        if needsComma { output.append(UInt8(ascii: ",")) }
        output.append(contentsOf: UnsafeBufferPointer(
            start: quotedKeyAndColon.utf8Start, count: quotedKeyAndColon.utf8CodeUnitCount))
        needsComma = false
    }

    /// Writes a member name that must be quoted and escaped, such as a map key.
    @inlinable
    public mutating func writeKey(_ key: String) {
        if needsComma { output.append(UInt8(ascii: ",")) }
        appendQuoted(key)
        output.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Values

    /// Writes `null`.
    @inlinable
    public mutating func writeNull() {
        appendLiteral("null")
        needsComma = true
    }

    /// Writes `true` or `false`.
    @inlinable
    public mutating func writeBool(_ value: Bool) {
        appendLiteral(value ? "true" : "false")
        needsComma = true
    }

    /// Writes an integer as a bare JSON number (32-bit types).
    @inlinable
    public mutating func writeNumber(_ value: Int64) {
        appendDecimal(value)
        needsComma = true
    }

    /// Writes an unsigned integer as a bare JSON number (32-bit types).
    @inlinable
    public mutating func writeNumber(_ value: UInt64) {
        appendDecimal(value)
        needsComma = true
    }

    /// Writes a 64-bit integer as a quoted string, as the protobuf JSON mapping requires.
    @inlinable
    public mutating func writeQuotedNumber(_ value: Int64) {
        output.append(UInt8(ascii: "\""))
        appendDecimal(value)
        output.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes a 64-bit unsigned integer as a quoted string.
    @inlinable
    public mutating func writeQuotedNumber(_ value: UInt64) {
        output.append(UInt8(ascii: "\""))
        appendDecimal(value)
        output.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes a double; NaN and infinities become the strings protobuf uses.
    public mutating func writeDouble(_ value: Double) {
        if value.isNaN {
            appendLiteral("\"NaN\"")
        } else if value.isInfinite {
            appendLiteral(value < 0 ? "\"-Infinity\"" : "\"Infinity\"")
        } else if value == value.rounded(.towardZero), abs(value) < 1e15, !(value == 0 && value.sign == .minus) {
            appendDecimal(Int64(value))
        } else {
            output.append(contentsOf: value.description.utf8)
        }
        needsComma = true
    }

    /// Writes a float with the shortest text that reads back as the same float.
    public mutating func writeFloat(_ value: Float) {
        if value.isNaN {
            appendLiteral("\"NaN\"")
        } else if value.isInfinite {
            appendLiteral(value < 0 ? "\"-Infinity\"" : "\"Infinity\"")
        } else if value == value.rounded(.towardZero), abs(value) < 1e7, !(value == 0 && value.sign == .minus) {
            appendDecimal(Int64(value))
        } else {
            output.append(contentsOf: value.description.utf8)
        }
        needsComma = true
    }

    /// Writes a quoted, escaped string.
    @inlinable
    public mutating func writeString(_ value: String) {
        appendQuoted(value)
        needsComma = true
    }

    /// Writes bytes as standard, padded base64 in quotes.
    public mutating func writeBase64(_ value: Data) {
        output.append(UInt8(ascii: "\""))
        value.withUnsafeBytes { Base64.encode($0, into: &output) }
        output.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes a literal that needs no escaping, such as an enum name, in quotes.
    @inlinable
    public mutating func writeQuotedLiteral(_ literal: StaticString) {
        output.append(UInt8(ascii: "\""))
        appendLiteral(literal)
        output.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes a literal value that is already valid JSON.
    @inlinable
    public mutating func writeRawValue(_ literal: StaticString) {
        appendLiteral(literal)
        needsComma = true
    }

    /// Writes an already-encoded value.
    @inlinable
    public mutating func writeRawValue(_ utf8: [UInt8]) {
        output.append(contentsOf: utf8)
        needsComma = true
    }

    // MARK: Helpers

    @inlinable
    mutating func appendLiteral(_ literal: StaticString) {
        output.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    @inlinable
    mutating func appendDecimal(_ value: Int64) {
        if value < 0 {
            output.append(UInt8(ascii: "-"))
            appendDecimal(value.magnitude)
        } else {
            appendDecimal(UInt64(value))
        }
    }

    @inlinable
    mutating func appendDecimal(_ value: UInt64) {
        if value < 10 {
            output.append(UInt8(truncatingIfNeeded: value) &+ 48)
            return
        }
        // Up to 20 digits, written backwards into a small stack buffer.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var index = 20
            var remaining = value
            while remaining > 0 {
                index -= 1
                digits[index] = UInt8(truncatingIfNeeded: remaining % 10) &+ 48
                remaining /= 10
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: digits[index..<20]))
        }
    }

    @inlinable
    mutating func appendQuoted(_ value: String) {
        output.append(UInt8(ascii: "\""))
        let utf8 = value.utf8
        let done: Void? = utf8.withContiguousStorageIfAvailable { appendEscaped($0) }
        if done == nil {
            let bytes = Array(utf8)
            bytes.withUnsafeBufferPointer { appendEscaped($0) }
        }
        output.append(UInt8(ascii: "\""))
    }

    @inlinable
    mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        let count = utf8.count
        var runStart = 0
        while runStart < count {
            let plain = JSONStringScan.plainPrefixLength(UnsafeRawPointer(base + runStart), count: count - runStart)
            if plain > 0 { output.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: plain)) }
            runStart += plain
            if runStart < count {
                appendEscape(base[runStart])
                runStart += 1
            }
        }
    }

    @usableFromInline
    mutating func appendEscape(_ byte: UInt8) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        default:
            let hex: StaticString = "0123456789abcdef"
            output.append(contentsOf: [UInt8(ascii: "u"), 48, 48, hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)]])
        }
    }
}
