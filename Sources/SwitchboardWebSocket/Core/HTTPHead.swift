/// The start line and headers of an HTTP/1.1 message, as the WebSocket handshake uses.
public struct HTTPHead: Sendable, Hashable {
    /// `GET /path HTTP/1.1` or `HTTP/1.1 101 Switching Protocols`, split on spaces (3 parts at most).
    public var startLine: [String]
    /// The header fields in order, names as sent.
    public var headers: [HTTPHeaderField]

    /// The default largest head (``HTTPHeadLimits/maximumSize``): 16 KiB.
    public static let maximumSize = 16 * 1024
    /// The default most header fields (``HTTPHeadLimits/maximumHeaderCount``): 100.
    public static let maximumHeaderCount = 100

    /// The first value of `name`, case-insensitively.
    public func value(_ name: String) -> String? { headers.value(named: name) }

    /// Whether a comma-separated header (such as `Connection`) holds `token`, compared in
    /// ASCII without case: Unicode case folding would take `websoc\u{212A}et` (a Kelvin sign)
    /// for `websocket`, which a proxy comparing bytes does not.
    public func hasToken(_ name: String, _ token: String) -> Bool {
        headers.values(named: name).contains { value in
            value.split(separator: ",").contains { Self.equalIgnoringASCIICase(String($0).trimmingCharacters(in: .whitespaces), token) }
        }
    }

    /// `HTTP/1.0` or `HTTP/1.1` (RFC 9112 §2.3: `HTTP/` DIGIT `.` DIGIT, major version 1).
    static func isHTTP1Version(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == 8 && text.hasPrefix("HTTP/1.") && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[7])
    }

    /// A status code: exactly three ASCII digits (RFC 9112 §4), not `+101` or `0101`.
    static func statusCode(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 3, bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        return bytes.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// A Host value (RFC 9110 §7.2: `uri-host [":" port]`): a non-empty name of unreserved
    /// and sub-delimiter characters or percent-escapes, or a bracketed IP literal, with
    /// digits after a colon. No spaces, `/`, `@`, `?` or `#`.
    static func isHostValue(_ value: String) -> Bool {
        var bytes = Substring(value).utf8[...]
        guard !bytes.isEmpty else { return false }
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let literal = bytes[bytes.index(after: bytes.startIndex)..<close]
            guard !literal.isEmpty, literal.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") || isHostNameByte($0) }) else { return false }
            bytes = bytes[bytes.index(after: close)...]
        } else {
            let name = bytes.prefix { $0 != UInt8(ascii: ":") }
            guard !name.isEmpty, name.allSatisfy(isHostNameByte) else { return false }
            bytes = bytes[name.endIndex...]
        }
        guard let colon = bytes.first else { return true }
        guard colon == UInt8(ascii: ":") else { return false }
        let port = bytes.dropFirst()
        return port.count <= 5 && port.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }

    /// reg-name characters: unreserved, sub-delims and `%` (RFC 3986 §3.2.2).
    private static func isHostNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("-._~!$&'()*+,;=%".utf8).contains(byte)
        }
    }

    /// Whether `a` and `b` are the same bytes but for the case of ASCII letters.
    static func equalIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8) { x, y in
            x == y || ((x | 0x20) == (y | 0x20) && (x | 0x20) >= UInt8(ascii: "a") && (x | 0x20) <= UInt8(ascii: "z"))
        }
    }

    /// Parses a head from the start of `bytes`; `nil` until `\r\n\r\n` has arrived.
    /// Returns the head and the number of bytes it used; later bytes belong to the body or frames.
    /// `searchingFrom` skips what an earlier call looked at already (its `bytes.count - 3`),
    /// so a head that arrives a byte at a time costs linear time, not quadratic. A head past
    /// `limits` throws.
    ///
    /// With `isResponse` (a client reading its server's answer) the head is read as RFC 9112
    /// asks of a user agent: a folded continuation line (obs-fold, §5.2) joins the field before
    /// it with a space, and a reason phrase that is not UTF-8 is decoded leniently (a client
    /// ignores it, §4). A request (a server's reading) refuses both.
    public static func parse(_ bytes: [UInt8], searchingFrom start: Int = 0, limits: HTTPHeadLimits = .init(),
                             isResponse: Bool = false) throws(WebSocketError) -> (head: HTTPHead, consumed: Int)? {
        let maximumSize = limits.maximumSize, maximumHeaderCount = limits.maximumHeaderCount
        let limit = min(bytes.count, maximumSize + 4)
        var end: Int?
        if limit >= 4 {
            for index in max(0, min(start, limit - 4))...(limit - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                end = index
                break
            }
        }
        guard let end else {
            if bytes.count > maximumSize { throw .invalidHTTP("head larger than \(maximumSize) bytes") }
            return nil
        }
        // A response's start line is decoded with replacement characters below: only its
        // reason phrase may hold more than ASCII, and nothing reads it.
        let checkedFrom = isResponse ? (bytes[0..<end].firstIndex(of: 13) ?? end) : 0
        var validator = UTF8StreamValidator()
        guard validator.feed(bytes[checkedFrom..<end]), validator.isComplete else { throw .invalidHTTP("head is not UTF-8") }
        // Control characters other than tab end the line for some parsers and not for others
        // (a bare CR or LF inside a value smuggles a header past a proxy): refused outright
        // (RFC 9112 §2.2, §5.5), whatever line they are on.
        var index = 0
        while index < end {
            let byte = bytes[index]
            if byte == 13 {
                guard index + 1 < end, bytes[index + 1] == 10 else { throw .invalidHTTP("a bare CR in the head") }
                index += 2
                continue
            }
            if (byte < 0x20 && byte != 0x09) || byte == 0x7F { throw .invalidHTTP("a control character in the head") }
            index += 1
        }
        let text = String(decoding: bytes[0..<end], as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let start = lines.removeFirst().split(separator: " ", maxSplits: 2).map(String.init)
        guard start.count >= 2 else { throw .invalidHTTP("malformed start line") }
        guard lines.count <= maximumHeaderCount else { throw .invalidHTTP("more than \(maximumHeaderCount) header fields") }
        var headers: [HTTPHeaderField] = []
        for line in lines {
            if isResponse, line.first == " " || line.first == "\t", !headers.isEmpty {
                // obs-fold: a user agent replaces it with a space (RFC 9112 §5.2).
                let continued = line.trimmingCharacters(in: .whitespaces)
                let last = headers.count - 1
                // Appended in place: a new string per line made many folded lines quadratic.
                if !continued.isEmpty {
                    if !headers[last].value.isEmpty { headers[last].value.append(" ") }
                    headers[last].value.append(continued)
                }
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { throw .invalidHTTP("malformed header line") }
            let name = String(line[..<colon])
            // A token: no whitespace before the colon (RFC 9112 §5.1), which also refuses a
            // folded continuation line.
            guard HTTPFieldSyntax.isToken(name) else { throw .invalidHTTP("malformed header name") }
            headers.append(HTTPHeaderField(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return (HTTPHead(startLine: start, headers: headers), end + 4)
    }
}

extension String {
    func trimmingCharacters(in set: CharacterSetLike) -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}

extension Substring {
    func trimmingCharacters(in set: CharacterSetLike) -> String { String(self).trimmingCharacters(in: set) }
}

/// Only spaces and tabs are trimmed; avoids pulling CharacterSet into the hot path.
public enum CharacterSetLike {
    /// Spaces and tabs.
    case whitespaces
}
