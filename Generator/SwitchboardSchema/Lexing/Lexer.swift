/// Splits schema text into tokens.
///
/// Newlines carry no meaning, `//` and `/* */` are comments, and `///` lines are
/// documentation attached to the next token. Every input terminates: each loop
/// step consumes at least one byte.
public struct Lexer {
    let file: SourceFile
    /// The file's UTF-8 while ``tokenize(_:fileIndex:limits:)`` runs (empty otherwise): a
    /// buffer, not the array, since a debug build retains and releases an array at each read.
    var bytes = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    let fileIndex: Int
    var position = 0
    var diagnostics = DiagnosticCollector()
    var pendingDocumentation: [String] = []
    var pendingDocumentationLocation: SourceLocation?

    /// The default longest name, in characters (all ASCII): 128 (``SchemaLimits/maximumIdentifierLength``).
    public static let maximumIdentifierLength = 128

    /// The longest name this lexer accepts (``SchemaLimits/maximumIdentifierLength``).
    let identifierLimit: Int

    /// The default longest string literal, in UTF-8 bytes of its text once escapes are read:
    /// 64 KiB (``SchemaLimits/maximumStringLength``).
    public static let maximumStringLength = 64 << 10

    /// The longest string literal this lexer accepts (``SchemaLimits/maximumStringLength``).
    let stringLimit: Int

    /// Creates a lexer for `file`, the `fileIndex`-th file of the load.
    public init(file: SourceFile, fileIndex: Int, limits: SchemaLimits = SchemaLimits()) {
        self.file = file
        identifierLimit = limits.maximumIdentifierLength
        stringLimit = limits.maximumStringLength
        self.fileIndex = fileIndex
    }

    /// Tokenises the whole file. The last token is always `.endOfFile`.
    public static func tokenize(_ file: SourceFile, fileIndex: Int, limits: SchemaLimits = SchemaLimits()) -> (tokens: [Token], diagnostics: [Diagnostic]) {
        var lexer = Lexer(file: file, fileIndex: fileIndex, limits: limits)
        var tokens: [Token] = []
        file.utf8.withUnsafeBufferPointer { buffer in
            lexer.bytes = buffer
            // A UTF-8 byte order mark, as some editors save, is not text.
            if buffer.starts(with: [0xEF, 0xBB, 0xBF]) { lexer.position = 3 }
            while true {
                let token = lexer.next()
                tokens.append(token)
                if token.kind == .endOfFile { break }
            }
            lexer.bytes = UnsafeBufferPointer(start: nil, count: 0)
        }
        return (tokens, lexer.diagnostics.diagnostics)
    }

    /// The text of `range` of the file.
    mutating func text(_ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    func location(_ offset: Int) -> SourceLocation { SourceLocation(file: fileIndex, offset: offset) }

    // Mutating, like every helper the scanning loops call: a debug build copies the whole
    // lexer (eight references) for each call of a non-mutating method from a mutating one.
    mutating func peek(_ ahead: Int = 0) -> UInt8? {
        position + ahead < bytes.count ? bytes[position + ahead] : nil
    }

    mutating func make(_ kind: Token.Kind, _ text: String, start: Int, integer: UInt64? = nil) -> Token {
        let documentation = pendingDocumentation
        let documentationLocation = pendingDocumentationLocation
        pendingDocumentation = []
        pendingDocumentationLocation = nil
        return Token(
            kind: kind, text: text, integerValue: integer, location: SourceLocation(file: fileIndex, offset: start),
            documentation: documentation, documentationLocation: documentationLocation)
    }

    mutating func next() -> Token {
        while true {
            skipWhitespaceAndComments()
            guard let byte = peek() else {
                if let docLocation = pendingDocumentationLocation {
                    diagnostics.warning(.danglingDocComment, "documentation comment is not attached to a declaration", at: docLocation)
                    pendingDocumentation = []
                }
                return make(.endOfFile, "", start: position)
            }
            let start = position
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"):
                while let next = peek(), Self.isIdentifierByte(next) { position += 1 }
                if position - start > identifierLimit {
                    // Names become Swift types and file names (at most 255 bytes on most file
                    // systems), and are repeated in generated code: a 1 MB name would fail late,
                    // unlocated, after writing hundreds of megabytes.
                    diagnostics.error(.identifierTooLong, "this name is \(position - start) characters long; names have at most \(identifierLimit)", at: location(start))
                    return make(.identifier, text(start..<(start + identifierLimit)), start: start)
                }
                return make(.identifier, text(start..<position), start: start)
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                return lexInteger(start: start)
            case UInt8(ascii: "\""):
                return lexString(start: start)
            default:
                position += 1
                let kind: Token.Kind?
                switch byte {
                case UInt8(ascii: "{"): kind = .leftBrace
                case UInt8(ascii: "}"): kind = .rightBrace
                case UInt8(ascii: "["): kind = .leftBracket
                case UInt8(ascii: "]"): kind = .rightBracket
                case UInt8(ascii: "("): kind = .leftParen
                case UInt8(ascii: ")"): kind = .rightParen
                case UInt8(ascii: ":"): kind = .colon
                case UInt8(ascii: ","): kind = .comma
                case UInt8(ascii: "="): kind = .equals
                case UInt8(ascii: "?"): kind = .question
                case UInt8(ascii: "."): kind = .dot
                case UInt8(ascii: "@"): kind = .at
                case UInt8(ascii: "/"): kind = .slash
                case UInt8(ascii: "*"): kind = .star
                case UInt8(ascii: "!"): kind = .bang
                case UInt8(ascii: "-"):
                    if peek() == UInt8(ascii: ">") {
                        position += 1
                        kind = .arrow
                    } else {
                        kind = .minus
                    }
                default: kind = nil
                }
                if let kind {
                    return make(kind, text(start..<position), start: start)
                }
                // Skip the rest of a multi-byte scalar so the message names one character.
                while let next = peek(), next & 0xC0 == 0x80 { position += 1 }
                let character = text(start..<position)
                let shown = character.unicodeScalars.first.map { $0.isASCII && $0.value >= 0x20 ? "'\(character)'" : "U+\(String($0.value, radix: 16, uppercase: true))" } ?? "?"
                diagnostics.error(.unexpectedCharacter, "unexpected character \(shown)", at: location(start))
            }
        }
    }

    static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    mutating func skipWhitespaceAndComments() {
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                position += 1
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "/"):
                let start = position
                let isDoc = peek(2) == UInt8(ascii: "/") && peek(3) != UInt8(ascii: "/")
                // A comment ends at the line's end: LF, or CR alone (old Mac files), which
                // would otherwise make the first comment swallow the whole file.
                while let next = peek(), next != UInt8(ascii: "\n"), next != UInt8(ascii: "\r") { position += 1 }
                if isDoc {
                    var line = text((start + 3)..<position)
                    if line.hasSuffix("\r") { line.removeLast() }
                    if line.hasPrefix(" ") { line.removeFirst() }
                    if pendingDocumentationLocation == nil { pendingDocumentationLocation = location(start) }
                    pendingDocumentation.append(line)
                }
            case UInt8(ascii: "/") where peek(1) == UInt8(ascii: "*"):
                let start = position
                position += 2
                var depth = 1
                while depth > 0 {
                    guard let next = peek() else {
                        diagnostics.error(.unterminatedComment, "unterminated block comment", at: location(start))
                        return
                    }
                    if next == UInt8(ascii: "*"), peek(1) == UInt8(ascii: "/") {
                        depth -= 1
                        position += 2
                    } else if next == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                        depth += 1
                        position += 2
                    } else {
                        position += 1
                    }
                }
            default:
                return
            }
        }
    }

    mutating func lexInteger(start: Int) -> Token {
        var value: UInt64? = 0
        var radix: UInt64 = 10
        if peek() == UInt8(ascii: "0"), let x = peek(1), x == UInt8(ascii: "x") || x == UInt8(ascii: "X") {
            radix = 16
            position += 2
        }
        let digitsStart = position
        while let byte = peek(), Self.isIdentifierByte(byte) {
            let digit: UInt64?
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(byte - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: digit = UInt64(byte - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: digit = UInt64(byte - 55)
            default: digit = nil
            }
            // A decimal number may run into a unit (`10s`); the unit lexes as an identifier.
            if digit == nil, radix == 10, byte != UInt8(ascii: "_") { break }
            guard let digit else {
                diagnostics.error(.unexpectedCharacter, "unexpected character '\(Character(Unicode.Scalar(byte)))' in integer literal", at: location(position))
                position += 1
                while let next = peek(), Self.isIdentifierByte(next) { position += 1 }
                return make(.integer, text(start..<position), start: start, integer: 0)
            }
            if let current = value {
                let (times, o1) = current.multipliedReportingOverflow(by: radix)
                let (sum, o2) = times.addingReportingOverflow(digit)
                value = o1 || o2 ? nil : sum
            }
            position += 1
        }
        let literal = text(start..<position)
        if position == digitsStart {
            diagnostics.error(.unexpectedCharacter, "expected hexadecimal digits after '0x'", at: location(start))
            return make(.integer, literal, start: start, integer: 0)
        }
        if value == nil {
            diagnostics.error(.integerTooLarge, "integer literal '\(literal)' is too large", at: location(start))
        }
        return make(.integer, literal, start: start, integer: value)
    }

    mutating func lexString(start: Int) -> Token {
        position += 1
        var decoded: [UInt8] = []
        // Bytes of text past the limit are counted, not kept: paths, headers and names are
        // short, and a megabyte path would cost every check (and generated file) that reads it.
        var length = 0
        let limit = stringLimit
        func append(_ byte: UInt8) {
            length += 1
            if length <= limit { decoded.append(byte) }
        }
        while true {
            guard let byte = peek(), byte != UInt8(ascii: "\n"), byte != UInt8(ascii: "\r") else {
                diagnostics.error(.unterminatedString, "unterminated string literal", at: location(start))
                return make(.string, String(decoding: decoded, as: UTF8.self), start: start)
            }
            position += 1
            if byte == UInt8(ascii: "\"") { break }
            guard byte == UInt8(ascii: "\\") else {
                append(byte)
                continue
            }
            let escapeStart = position - 1
            // A line end (LF, CR or CR LF) ends the string, escaped or not.
            guard let escape = peek(), escape != UInt8(ascii: "\n"), escape != UInt8(ascii: "\r") else { continue }
            position += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(escape)
            case UInt8(ascii: "n"): append(0x0A)
            case UInt8(ascii: "t"): append(0x09)
            default:
                // The whole character after the backslash, not its first byte alone.
                while let next = peek(), next & 0xC0 == 0x80 { position += 1 }
                let character = text(escapeStart + 1..<position)
                let value = character.unicodeScalars.first?.value ?? 0
                let shown = value < 0x20 || value == 0x7F ? "'\\' followed by U+\(String(value, radix: 16, uppercase: true))" : "'\\\(character)'"
                diagnostics.error(.invalidEscape, "invalid escape sequence \(shown) in string literal", at: location(escapeStart))
            }
        }
        if length > stringLimit {
            diagnostics.error(.stringTooLong, "this string is \(length) bytes long; strings have at most \(stringLimit)", at: location(start))
        }
        return make(.string, String(decoding: decoded, as: UTF8.self), start: start)
    }
}
