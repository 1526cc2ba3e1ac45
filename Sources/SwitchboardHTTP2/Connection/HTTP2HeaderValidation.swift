import SwitchboardHTTPSyntax

/// The checks RFC 9113 §8.2–8.3 puts on a received header list. A list that fails is
/// "malformed": a stream error of type PROTOCOL_ERROR, never passed on.
package enum HTTP2HeaderValidation {
    /// What the list is expected to be.
    enum Kind: CaseIterable {
        case request, response, trailers
    }

    /// What a valid list says that the connection itself needs.
    struct Summary: Equatable {
        /// The `content-length`, if given.
        var contentLength: Int?
        /// A response's `:status` was 1xx: more headers follow.
        var isInformational = false
    }

    /// Fields that belong to one HTTP/1.1 hop and have no meaning in HTTP/2.
    private static func isConnectionSpecific(_ name: String) -> Bool {
        // By length first: most names match none of these lengths and skip the comparisons.
        switch name.utf8.count {
        case 7: name == "upgrade"
        // (By first byte too: `user-agent` has this length, and comparing unequal strings
        // takes the Unicode-aware path.)
        case 10:
            switch name.utf8.first {
            case UInt8(ascii: "c"): name == "connection"
            case UInt8(ascii: "k"): name == "keep-alive"
            default: false
            }
        case 16: name == "proxy-connection"
        case 17: name == "transfer-encoding"
        default: false
        }
    }

    /// The pseudo-headers seen so far, one bit each (any other is refused before it counts).
    private struct PseudoHeaders: OptionSet {
        let rawValue: UInt8
        static let method = PseudoHeaders(rawValue: 1)
        static let path = PseudoHeaders(rawValue: 2)
        static let scheme = PseudoHeaders(rawValue: 4)
        static let authority = PseudoHeaders(rawValue: 8)
        static let status = PseudoHeaders(rawValue: 16)
    }

    /// Whether a field's characters pass every check ``validate(_:as:checked:)`` makes of
    /// characters, whatever the list's kind: a name that is one of the five pseudo-headers or
    /// lowercase tchar, a value without NUL, CR, LF or whitespace at either end. The HPACK
    /// decoder asks once per dynamic-table entry, so fields that refer to it are not checked
    /// again.
    static func charactersAreClean(name: String, value: String) -> Bool {
        var name = name, value = value
        let isPseudo = pseudoHeader(name, in: .request) != nil || pseudoHeader(name, in: .response) != nil
        let nameIsClean = isPseudo || name.withUTF8 { !$0.isEmpty && nameProblem($0) == nil }
        return nameIsClean && value.withUTF8 { valueProblem($0, edgeWhitespaceAllowed: false) == nil }
    }

    /// Checks a received list. `checked` (the decoder's ``HPACKDecoder/Block/checkedFields``)
    /// marks fields whose characters are known clean: only their meaning is checked.
    static func validate(_ headers: [HPACKHeader], as kind: Kind, checked: UInt64 = 0) throws(HTTP2ProtocolViolation) -> Summary {
        // Through the array's buffer, each field's strings borrowed where they are: iterating
        // the array copied each field (two retains and releases, about 60 instructions).
        try headers.withUnsafeBufferPointer { fields throws(HTTP2ProtocolViolation) in try validate(fields, as: kind, checked: checked) }
    }

    private static func validate(_ headers: UnsafeBufferPointer<HPACKHeader>, as kind: Kind, checked: UInt64) throws(HTTP2ProtocolViolation) -> Summary {
        var summary = Summary()
        var seenRegular = false
        var pseudo: PseudoHeaders = []
        // Positions, not copies of the values (each a retain and a release).
        var method: Int?
        var path: Int?
        var status: Int?
        for position in headers.indices {
            let known = position < 64 && checked & (1 << UInt64(position)) != 0
            let name = headers[position].name.utf8
            guard !name.isEmpty else { throw malformed("an empty field name") }
            if name[name.startIndex] == UInt8(ascii: ":") {
                guard !seenRegular else { throw malformed("pseudo-header \(headers[position].name) after a regular field") }
                guard let this = pseudoHeader(headers[position].name, in: kind) else {
                    throw malformed("pseudo-header \(headers[position].name) not allowed in a \(kind)")
                }
                guard pseudo.insert(this).inserted else { throw malformed("pseudo-header \(headers[position].name) twice") }
                // A path or authority with CR, LF or NUL would be forwarded or logged as given.
                if !known { try checkValue(headers[position].value, edgeWhitespaceAllowed: false) }
                if this == .method { method = position } else if this == .path { path = position } else if this == .status { status = position }
                continue
            }
            seenRegular = true
            // Decoded names are native strings, so this borrows their bytes.
            if !known, let problem = name.withContiguousStorageIfAvailable(nameProblem) ?? Array(name).withUnsafeBufferPointer(nameProblem) {
                throw malformed(problem)
            }
            guard !isConnectionSpecific(headers[position].name) else { throw malformed("connection-specific field \(headers[position].name)") }
            let nameLength = name.count
            if nameLength == 2, headers[position].name == "te", headers[position].value != "trailers" { throw malformed("te other than \"trailers\"") }
            if !known { try checkValue(headers[position].value, edgeWhitespaceAllowed: kind != .request) }
            if nameLength == 14, headers[position].name == "content-length" {
                guard let length = Int(headers[position].value), length >= 0, headers[position].value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
                    throw malformed("an invalid content-length")
                }
                if let earlier = summary.contentLength, earlier != length { throw malformed("two different content-lengths") }
                summary.contentLength = length
            }
        }
        switch kind {
        case .request:
            guard let method else { throw malformed("a request without :method") }
            if !HTTPSyntax.sameBytes(headers[method].value, "CONNECT") {
                guard pseudo.contains(.scheme) else { throw malformed("a request without :scheme") }
                guard let path, !headers[path].value.isEmpty else { throw malformed("a request without :path") }
            } else {
                // RFC 9113 §8.5 (extended CONNECT is never enabled here).
                guard pseudo.contains(.authority), !pseudo.contains(.scheme), path == nil else {
                    throw malformed("a CONNECT request needs :authority and has no :scheme or :path")
                }
            }
        case .response:
            // Nearly always the static table's `200`, the very string compared with (parsing
            // it cost about 120 instructions).
            guard let status, headers[status].value.utf8.count == 3,
                  let code = headers[status].value == "200" ? 200 : Int(headers[status].value), (100...999).contains(code) else {
                throw malformed("a response without a valid :status")
            }
            // HTTP/2 has no 101 (RFC 9113 §8.6): not an interim answer to skip.
            guard code != 101 else { throw malformed("a 101 response, which HTTP/2 does not have") }
            summary.isInformational = code < 200
        case .trailers:
            break
        }
        return summary
    }

    /// The pseudo-header `name` is in a list of `kind`, or nil if it has no place there.
    private static func pseudoHeader(_ name: String, in kind: Kind) -> PseudoHeaders? {
        // By length first: one comparison at most, not one per candidate.
        switch (kind, name.utf8.count) {
        case (.request, 7): name == ":method" ? .method : name == ":scheme" ? .scheme : nil
        case (.request, 5): name == ":path" ? .path : nil
        case (.request, 10): name == ":authority" ? .authority : nil
        case (.response, 7): name == ":status" ? .status : nil
        default: nil
        }
    }

    /// Why a regular field name cannot be used, or nil.
    private static func nameProblem(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        // Lowercase tchar (RFC 9110 §5.6.2): what a field name may hold in HTTP/2.
        for byte in bytes where !HTTPSyntax.isTokenByte(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) {
            return byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? "an uppercase field name" : "a field name with an invalid character"
        }
        return nil
    }

    /// No NUL, CR or LF anywhere, and no whitespace at either end (RFC 9113 §8.2.1) in a
    /// request. A response's or trailers' edge whitespace is let through: gRPC servers in Go
    /// and Java send a `grpc-message` ending in a space unencoded, and refusing it would lose
    /// the call's status.
    private static func checkValue(_ value: String, edgeWhitespaceAllowed: Bool) throws(HTTP2ProtocolViolation) {
        // Decoded values are native strings, so this borrows their bytes; the fallback walks
        // the view for any other kind.
        let check = { (bytes: UnsafeBufferPointer<UInt8>) in valueProblem(bytes, edgeWhitespaceAllowed: edgeWhitespaceAllowed) }
        let verdict = value.utf8.withContiguousStorageIfAvailable(check) ?? Array(value.utf8).withUnsafeBufferPointer(check)
        if let verdict { throw malformed(verdict) }
    }

    static func valueProblem(_ bytes: UnsafeBufferPointer<UInt8>, edgeWhitespaceAllowed: Bool) -> String? {
        if HTTPSyntax.hasNULCROrLF(bytes) { return "a field value with NUL, CR or LF" }
        guard !edgeWhitespaceAllowed else { return nil }
        if let first = bytes.first, first == 32 || first == 9 { return "a field value with leading whitespace" }
        if let last = bytes.last, last == 32 || last == 9 { return "a field value with trailing whitespace" }
        return nil
    }

    private static func malformed(_ reason: String) -> HTTP2ProtocolViolation {
        HTTP2ProtocolViolation(.protocolError, "malformed header list: " + reason)
    }
}
