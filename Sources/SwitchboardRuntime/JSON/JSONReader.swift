import Foundation

/// Reads JSON for the protobuf JSON mapping, straight from UTF-8 bytes.
///
/// The reader is a pull scanner: generated code asks for the next member name
/// and then for a value of the type it expects. It tracks only whether the last
/// token opened a container, which is enough to enforce commas.
public struct JSONReader {
    @usableFromInline var cursor: UnsafeRawPointer
    @usableFromInline let start: UnsafeRawPointer
    @usableFromInline let end: UnsafeRawPointer
    @usableFromInline var afterOpen = false
    @usableFromInline var remainingDepth: Int
    /// The object depth at which an `"@type"` member is skipped: the members of a message
    /// packed in a `google.protobuf.Any` share its object. `Int.min` when none is.
    @usableFromInline var typeMemberDepth = Int.min
    /// The options this decode runs with.
    public let options: JSONDecodingOptions

    /// Creates a reader over `buffer`, which must outlive the reader.
    public init(buffer: UnsafeRawBufferPointer, options: JSONDecodingOptions = .init()) {
        let base = buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 0x10)!
        start = base
        cursor = base
        end = base + buffer.count
        remainingDepth = options.maximumDepth
        self.options = options
    }

    @inlinable
    var offset: Int { cursor - start }

    @inlinable
    func peek() -> UInt8? { cursor < end ? cursor.load(as: UInt8.self) : nil }

    @inlinable
    mutating func skipWhitespace() {
        while cursor < end {
            switch cursor.load(as: UInt8.self) {
            case 0x20, 0x0A, 0x0D, 0x09: cursor += 1
            default: return
            }
        }
    }

    @inlinable
    mutating func expect(_ byte: UInt8, _ what: String) throws(JSONDecodingError) {
        skipWhitespace()
        guard let next = peek() else { throw .unexpectedEnd }
        guard next == byte else { throw .unexpectedCharacter(offset: offset, expected: what) }
        cursor += 1
    }

    /// Fails unless only whitespace remains.
    public mutating func expectEnd() throws(JSONDecodingError) {
        skipWhitespace()
        if cursor < end { throw .trailingCharacters(offset: offset) }
    }

    // MARK: Objects and arrays

    /// Consumes `{`.
    @inlinable
    public mutating func beginObject() throws(JSONDecodingError) {
        try expect(UInt8(ascii: "{"), "'{'")
        guard remainingDepth > 0 else { throw .nestingTooDeep(limit: options.maximumDepth) }
        remainingDepth -= 1
        afterOpen = true
    }

    /// Returns the next member name and consumes its colon, or consumes `}` and returns `nil`.
    @inlinable
    public mutating func nextKey() throws(JSONDecodingError) -> JSONName? {
        skipWhitespace()
        guard let next = peek() else { throw .unexpectedEnd }
        if next == UInt8(ascii: "}") {
            cursor += 1
            remainingDepth += 1
            afterOpen = false
            return nil
        }
        if afterOpen {
            afterOpen = false
        } else {
            guard next == UInt8(ascii: ",") else { throw .unexpectedCharacter(offset: offset, expected: "',' or '}'") }
            cursor += 1
            skipWhitespace()
        }
        let name = try readName()
        try expect(UInt8(ascii: ":"), "':'")
        if remainingDepth == typeMemberDepth && name.matches("@type") {
            _ = try readString()
            return try nextKey()
        }
        return name
    }

    /// Runs `body` under the bound a reader made with `maximumDepth` would have here (never a
    /// looser one than this reader's): the objects and arrays open now count against it, and
    /// nesting past it fails with ``JSONDecodingError/nestingTooDeep(limit:)`` naming it. For a
    /// decoder whose reader has a looser bound (the dynamic codec's) handing a value to the
    /// runtime's decoders, which then stop where the generated codec's would.
    package mutating func withMaximumDepth<T>(
        _ maximumDepth: Int, _ body: (inout JSONReader) throws(JSONDecodingError) -> T
    ) throws(JSONDecodingError) -> T {
        let open = options.maximumDepth - remainingDepth
        let withheld = max(0, remainingDepth - max(0, maximumDepth - open))
        // Levels are counted down from here: an enclosing Any's level moves with them.
        remainingDepth -= withheld
        let typeMemberLevel = typeMemberDepth
        if typeMemberLevel != Int.min { typeMemberDepth = typeMemberLevel - withheld }
        defer {
            remainingDepth += withheld
            typeMemberDepth = typeMemberLevel
        }
        do throws(JSONDecodingError) {
            return try body(&self)
        } catch {
            // The only bound `body` reads under is `maximumDepth` or a tighter one.
            if case .nestingTooDeep = error, withheld > 0 { throw .nestingTooDeep(limit: maximumDepth) }
            throw error
        }
    }

    /// Whether this object's `"@type"` member is skipped (see ``typeMemberDepth``). Set
    /// just after the object's `{`.
    var skipsTypeMember: Bool {
        get { typeMemberDepth == remainingDepth }
        set { typeMemberDepth = newValue ? remainingDepth : Int.min }
    }

    /// Consumes `[`.
    @inlinable
    public mutating func beginArray() throws(JSONDecodingError) {
        try expect(UInt8(ascii: "["), "'['")
        guard remainingDepth > 0 else { throw .nestingTooDeep(limit: options.maximumDepth) }
        remainingDepth -= 1
        afterOpen = true
    }

    /// Returns true if another element follows, or consumes `]` and returns false.
    @inlinable
    public mutating func nextElement() throws(JSONDecodingError) -> Bool {
        skipWhitespace()
        guard let next = peek() else { throw .unexpectedEnd }
        if next == UInt8(ascii: "]") {
            cursor += 1
            remainingDepth += 1
            afterOpen = false
            return false
        }
        if afterOpen {
            afterOpen = false
        } else {
            guard next == UInt8(ascii: ",") else { throw .unexpectedCharacter(offset: offset, expected: "',' or ']'") }
            cursor += 1
        }
        return true
    }

    /// Whether the next value is a string.
    @inlinable
    public var peekIsString: Bool {
        mutating get {
            skipWhitespace()
            return peek() == UInt8(ascii: "\"")
        }
    }

    /// Consumes `null` and returns true if it comes next.
    @inlinable
    public mutating func readNull() -> Bool {
        skipWhitespace()
        guard end - cursor >= 4, memcmp(cursor, "null", 4) == 0 else { return false }
        cursor += 4
        return true
    }

    // MARK: Strings

    /// Reads a string as a borrowed name (member names, enum names).
    @inlinable
    public mutating func readName() throws(JSONDecodingError) -> JSONName {
        skipWhitespace()
        guard let next = peek() else { throw .unexpectedEnd }
        guard next == UInt8(ascii: "\"") else { throw .unexpectedCharacter(offset: offset, expected: "a string") }
        cursor += 1
        let contentStart = cursor
        cursor += JSONStringScan.plainPrefixLength(cursor, count: end - cursor)
        while cursor < end {
            let byte = cursor.load(as: UInt8.self)
            if byte == UInt8(ascii: "\"") {
                let name = JSONName(borrowing: contentStart, count: cursor - contentStart)
                cursor += 1
                return name
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            cursor += 1
        }
        cursor = contentStart
        return JSONName(unescaped: try readEscapedContent())
    }

    /// Reads a string value, validating its UTF-8.
    @inlinable
    public mutating func readString() throws(JSONDecodingError) -> String {
        let stringOffset = offset
        let name = try readName()
        let string: String? = name.withUnsafeBytes { bytes in
            if bytes.isEmpty { return "" }
            guard UTF8Validation.isValid(bytes) else { return nil }
            return UTF8Validation.string(fromValid: bytes)
        }
        guard let string else { throw .invalidString(offset: stringOffset) }
        return string
    }

    /// Decodes the content of a string with escapes, from just after the opening quote.
    @usableFromInline
    mutating func readEscapedContent() throws(JSONDecodingError) -> [UInt8] {
        var output: [UInt8] = []
        while true {
            guard cursor < end else { throw .unexpectedEnd }
            let byte = cursor.load(as: UInt8.self)
            cursor += 1
            switch byte {
            case UInt8(ascii: "\""):
                return output
            case 0..<0x20:
                throw .invalidString(offset: offset - 1)
            case UInt8(ascii: "\\"):
                guard cursor < end else { throw .unexpectedEnd }
                let escape = cursor.load(as: UInt8.self)
                cursor += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard end - cursor >= 2, cursor.load(as: UInt8.self) == UInt8(ascii: "\\"),
                              cursor.load(fromByteOffset: 1, as: UInt8.self) == UInt8(ascii: "u")
                        else { throw .invalidString(offset: offset) }
                        cursor += 2
                        let low = try readHex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw .invalidString(offset: offset) }
                        scalar = 0x10000 + (scalar - 0xD800) << 10 + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw .invalidString(offset: offset)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw .invalidString(offset: offset) }
                    output.append(contentsOf: UTF8.encode(unicode)!)
                default:
                    throw .invalidString(offset: offset - 1)
                }
            default:
                output.append(byte)
            }
        }
    }

    @usableFromInline
    mutating func readHex4() throws(JSONDecodingError) -> UInt32 {
        guard end - cursor >= 4 else { throw .unexpectedEnd }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = cursor.load(as: UInt8.self)
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 55)
            default: throw .invalidString(offset: offset)
            }
            value = value << 4 | digit
            cursor += 1
        }
        return value
    }

    // MARK: Scalars

    /// Reads `true` or `false`.
    public mutating func readBool() throws(JSONDecodingError) -> Bool {
        skipWhitespace()
        if end - cursor >= 4, memcmp(cursor, "true", 4) == 0 {
            cursor += 4
            return true
        }
        if end - cursor >= 5, memcmp(cursor, "false", 5) == 0 {
            cursor += 5
            return false
        }
        if cursor >= end { throw .unexpectedEnd }
        throw .unexpectedCharacter(offset: offset, expected: "true or false")
    }

    /// Reads a signed integer written as a number or a quoted string, checked against `range`.
    @inlinable
    public mutating func readInteger(in range: ClosedRange<Int64>) throws(JSONDecodingError) -> Int64 {
        skipWhitespace()
        let numberOffset = offset
        let quoted = peek() == UInt8(ascii: "\"")
        if quoted, hasEscapeBeforeClosingQuote() {
            return try readUnescapedNumber(offset: numberOffset) { (inner: inout JSONReader) throws(JSONDecodingError) in try inner.readInteger(in: range) }
        }
        if quoted { cursor += 1 }
        var negative = false
        if peek() == UInt8(ascii: "-") {
            negative = true
            cursor += 1
        }
        let magnitude = try readIntegerMagnitude(offset: numberOffset, quoted: quoted)
        if quoted { try expectClosingQuote(offset: numberOffset) }
        let value: Int64
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw .invalidNumber(offset: numberOffset) }
            value = magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        } else {
            guard magnitude <= UInt64(Int64.max) else { throw .invalidNumber(offset: numberOffset) }
            value = Int64(magnitude)
        }
        guard range.contains(value) else { throw .invalidNumber(offset: numberOffset) }
        return value
    }

    /// Reads an unsigned integer written as a number or a quoted string, checked against `maximum`.
    @inlinable
    public mutating func readUnsignedInteger(maximum: UInt64) throws(JSONDecodingError) -> UInt64 {
        skipWhitespace()
        let numberOffset = offset
        let quoted = peek() == UInt8(ascii: "\"")
        if quoted, hasEscapeBeforeClosingQuote() {
            return try readUnescapedNumber(offset: numberOffset) { (inner: inout JSONReader) throws(JSONDecodingError) in try inner.readUnsignedInteger(maximum: maximum) }
        }
        if quoted { cursor += 1 }
        let value = try readIntegerMagnitude(offset: numberOffset, quoted: quoted)
        if quoted { try expectClosingQuote(offset: numberOffset) }
        guard value <= maximum else { throw .invalidNumber(offset: numberOffset) }
        return value
    }

    /// Whether the string starting at the cursor (its opening quote) holds an escape: a
    /// quoted number may spell its digits with escapes (`"2\u00314"`), rarely.
    @usableFromInline
    func hasEscapeBeforeClosingQuote() -> Bool {
        var scan = cursor + 1
        while scan < end {
            let byte = scan.load(as: UInt8.self)
            if byte == UInt8(ascii: "\"") { return false }
            if byte == UInt8(ascii: "\\") { return true }
            scan += 1
        }
        return false
    }

    /// Reads a quoted number that holds escapes: the string is unescaped, and `parse` reads
    /// it as an unquoted number that must fill it (errors point at the string).
    @usableFromInline
    mutating func readUnescapedNumber<T>(offset numberOffset: Int,
                                         _ parse: (inout JSONReader) throws(JSONDecodingError) -> T) throws(JSONDecodingError) -> T {
        let text = try readName()
        let options = options
        let result: Result<T, JSONDecodingError> = text.withUnsafeBytes { bytes in
            var inner = JSONReader(buffer: bytes, options: options)
            // Neither a second layer of quotes nor blanks: the digits alone.
            guard let first = inner.peek(), first != UInt8(ascii: "\""), first > 0x20 else { return .failure(.invalidNumber(offset: numberOffset)) }
            do throws(JSONDecodingError) {
                let value = try parse(&inner)
                guard inner.cursor == inner.end else { return .failure(.invalidNumber(offset: numberOffset)) }
                return .success(value)
            } catch {
                return .failure(.invalidNumber(offset: numberOffset))
            }
        }
        return try result.get()
    }

    /// A quoted number must end right at its closing quote: no padding.
    @inlinable
    mutating func expectClosingQuote(offset numberOffset: Int) throws(JSONDecodingError) {
        guard peek() == UInt8(ascii: "\"") else { throw .invalidNumber(offset: numberOffset) }
        cursor += 1
    }

    /// Reads digits; falls back to a floating-point parse for forms like `1e3` or `5.0`,
    /// which protobuf accepts for integers when the value is integral and at most 2^53.
    @inlinable
    mutating func readIntegerMagnitude(offset numberOffset: Int, quoted: Bool) throws(JSONDecodingError) -> UInt64 {
        let digitsStart = cursor
        var value: UInt64 = 0
        var overflow = false
        while cursor < end {
            let byte = cursor.load(as: UInt8.self)
            guard byte >= 48, byte <= 57 else { break }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - 48))
            overflow = overflow || o1 || o2
            value = sum
            cursor += 1
        }
        let digitCount = cursor - digitsStart
        guard digitCount > 0 else { throw .invalidNumber(offset: numberOffset) }
        if digitCount > 1, digitsStart.load(as: UInt8.self) == 48 { throw .invalidNumber(offset: numberOffset) }
        if let next = peek(), next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            cursor = digitsStart
            let double = try readDoubleText(offset: numberOffset)
            // Only where a double holds every integer (2^53), as protobuf's C++ parser: past
            // it `1234567890123456789e0` would come back silently rounded.
            guard double >= 0, double == double.rounded(), double < 9_007_199_254_740_992.0 else {
                throw .invalidNumber(offset: numberOffset)
            }
            return UInt64(double)
        }
        guard !overflow else { throw .invalidNumber(offset: numberOffset) }
        return value
    }

    /// Reads a double: a number, or a quoted number, `"NaN"`, `"Infinity"` or `"-Infinity"`.
    public mutating func readDouble() throws(JSONDecodingError) -> Double {
        skipWhitespace()
        let numberOffset = offset
        if peek() == UInt8(ascii: "\"") {
            let name = try readName()
            if name.matches("NaN") { return .nan }
            if name.matches("Infinity") { return .infinity }
            if name.matches("-Infinity") { return -.infinity }
            // The digits follow JSON's number grammar, as unquoted: no `0x10`, `+1`, `.5`, `5.`, blanks.
            let options = options
            let result: Result<Double, JSONDecodingError> = name.withUnsafeBytes { bytes in
                var inner = JSONReader(buffer: bytes, options: options)
                guard let first = inner.peek(), first == UInt8(ascii: "-") || (first >= 48 && first <= 57) else {
                    return .failure(.invalidNumber(offset: numberOffset))
                }
                do throws(JSONDecodingError) {
                    let value = try inner.readDoubleText(offset: numberOffset)
                    return inner.cursor == inner.end ? .success(value) : .failure(.invalidNumber(offset: numberOffset))
                } catch {
                    return .failure(.invalidNumber(offset: numberOffset))
                }
            }
            return try result.get()
        }
        return try readDoubleText(offset: numberOffset)
    }

    /// Reads a float, failing if a finite value rounds outside Float's range.
    public mutating func readFloat() throws(JSONDecodingError) -> Float {
        let numberOffset = offset
        let double = try readDouble()
        // Rounded to the nearest Float first: `3.4028235e+38`, how Float.greatestFiniteMagnitude
        // is written, is a little above it as a double, yet rounds to it.
        let float = Float(double)
        if double.isFinite, !float.isFinite { throw .invalidNumber(offset: numberOffset) }
        return float
    }

    @usableFromInline
    mutating func readDoubleText(offset numberOffset: Int) throws(JSONDecodingError) -> Double {
        let numberStart = cursor
        if peek() == UInt8(ascii: "-") { cursor += 1 }
        var sawDigit = false
        func digits(_ reader: inout JSONReader) -> Int {
            var count = 0
            while let byte = reader.peek(), byte >= 48, byte <= 57 {
                reader.cursor += 1
                count += 1
            }
            return count
        }
        let integerStart = cursor
        let integerDigits = digits(&self)
        sawDigit = integerDigits > 0
        if integerDigits > 1, integerStart.load(as: UInt8.self) == 48 { throw .invalidNumber(offset: numberOffset) }
        if peek() == UInt8(ascii: ".") {
            cursor += 1
            guard digits(&self) > 0 else { throw .invalidNumber(offset: numberOffset) }
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            cursor += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { cursor += 1 }
            guard digits(&self) > 0 else { throw .invalidNumber(offset: numberOffset) }
        }
        guard sawDigit else { throw .invalidNumber(offset: numberOffset) }
        let text = String(decoding: UnsafeRawBufferPointer(start: numberStart, count: cursor - numberStart), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw .invalidNumber(offset: numberOffset) }
        return value
    }

    /// Reads base64 text (standard or URL-safe, padding optional) as bytes.
    public mutating func readBase64() throws(JSONDecodingError) -> Data {
        skipWhitespace()
        let stringOffset = offset
        let name = try readName()
        guard let data = name.withUnsafeBytes({ Base64.decodeData($0) }) else {
            throw .invalidBase64(offset: stringOffset)
        }
        return data
    }

    /// Reads an RFC 3339 timestamp string.
    public mutating func readTimestamp() throws(JSONDecodingError) -> (seconds: Int64, nanos: Int32) {
        skipWhitespace()
        let stringOffset = offset
        let name = try readName()
        guard let parsed = name.withUnsafeBytes({ RFC3339.parse($0) }) else {
            throw .invalidTimestamp(offset: stringOffset)
        }
        return parsed
    }

    // MARK: Skipping

    /// Skips one value of any kind, for unknown members.
    public mutating func skipValue() throws(JSONDecodingError) {
        skipWhitespace()
        guard let next = peek() else { throw .unexpectedEnd }
        switch next {
        case UInt8(ascii: "{"):
            try beginObject()
            while try nextKey() != nil { try skipValue() }
        case UInt8(ascii: "["):
            try beginArray()
            while try nextElement() { try skipValue() }
        case UInt8(ascii: "\""):
            // Checked where it lies, not made into a String: skipping (an Any's first pass
            // over its members) allocates nothing for strings without escapes.
            let stringOffset = offset
            let name = try readName()
            guard name.withUnsafeBytes({ UTF8Validation.isValid($0) }) else { throw .invalidString(offset: stringOffset) }
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try readBool()
        case UInt8(ascii: "n"):
            guard readNull() else { throw .unexpectedCharacter(offset: offset, expected: "a value") }
        default:
            _ = try readDoubleText(offset: offset)
        }
        afterOpen = false
    }

    /// Handles a member the message does not define: skips it when the options allow, otherwise fails.
    public mutating func skipUnknownField(_ name: JSONName, in message: String) throws(JSONDecodingError) {
        guard options.ignoreUnknownFields else {
            throw .unknownField(message: message, name: name.string)
        }
        try skipValue()
    }
}
