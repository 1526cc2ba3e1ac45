import SwitchboardHTTPSyntax

/// Request or response headers: ordered, with case-insensitive lookup.
public struct RPCHeaders: Sendable, Hashable, ExpressibleByDictionaryLiteral, Sequence {
    /// The headers in order, names as given.
    public private(set) var fields: [(name: String, value: String)]

    /// Creates headers from name-value pairs.
    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// Creates headers from a literal, in its order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = []
        // An empty literal (`CallOptions`' default, a response without headers) allocates
        // nothing; a non-empty one leaves room for the credentials and content types that
        // generated calls add after it.
        guard !elements.isEmpty else { return }
        fields.reserveCapacity(Swift.max(4, elements.count))
        for (name, value) in elements { fields.append((name, value)) }
    }

    /// The first value of `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        fields.first { Self.namesMatch($0.name, name) }?.value
    }

    /// The value of `name` when it appears at most once; a second appearance is a
    /// ``RequestBindingError``, since a field bound to one header cannot take two values.
    public func onlyValue(_ name: String) throws(RequestBindingError) -> String? {
        var found: String?
        for field in fields where Self.namesMatch(field.name, name) {
            guard found == nil else { throw RequestBindingError("header '\(name)' is given more than once") }
            found = field.value
        }
        return found
    }

    /// Appends a header.
    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Whether both hold the very same field storage: copies of one list (such as the shared
    /// lists of ``BodyEncoding``), not merely equal ones. A check of two addresses, so work
    /// that depends only on a list can be done once for a list every call shares. Empty lists
    /// share nothing.
    public func sharesStorage(with other: RPCHeaders) -> Bool {
        HTTPSyntax.sameStorage(fields, other.fields)
    }

    /// Makes room for `count` fields, so adding that many allocates once.
    public mutating func reserveCapacity(_ count: Int) { fields.reserveCapacity(count) }

    /// Replaces every value of `name` with `value`.
    public mutating func set(_ name: String, _ value: String) {
        fields.removeAll { Self.namesMatch($0.name, name) }
        fields.append((name, value))
    }

    /// Removes every value of `name`, compared case-insensitively.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.namesMatch($0.name, name) }
    }

    /// Case-insensitive name comparison, as `lowercased()` on both sides would decide it.
    /// Header names are ASCII, so that case compares bytes without allocating; any other
    /// name takes the general path.
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        // The same string (a shared header list's `Content-Type` asked for by that literal):
        // two words compared, no bytes walked.
        if HTTPSyntax.sameRepresentation(lhs, rhs) { return true }
        var lhs = lhs, rhs = rhs
        let ascii = lhs.withUTF8 { left in
            rhs.withUTF8 { right -> Bool? in
                guard left.count == right.count else {
                    // Different byte counts differ after lowercasing too, unless non-ASCII.
                    // (A word at a time: this runs for every other name a lookup passes.)
                    let ascii = { (bytes: UnsafeBufferPointer<UInt8>) in
                        bytes.isEmpty || UTF8Validation.isASCII(UnsafeRawPointer(bytes.baseAddress!), count: bytes.count)
                    }
                    return ascii(left) && ascii(right) ? false : nil
                }
                for index in left.indices {
                    let a = left[index], b = right[index]
                    guard a < 0x80, b < 0x80 else { return nil }
                    if a != b && asciiLower(a) != asciiLower(b) { return false }
                }
                return true
            }
        }
        return ascii ?? (lhs.lowercased() == rhs.lowercased())
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: RPCHeaders, rhs: RPCHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}

extension RPCHeaders {
    /// Throws ``TransportError/invalidRequest(_:)`` naming the first header no transport can
    /// send as given: a name that is not an HTTP token (RFC 9110: letters, digits and
    /// `!#$%&'*+-.^_|~`, or a backtick) or a value holding NUL, CR or LF. Such a header would
    /// otherwise be dropped (HTTP/2 cannot carry it) or read back as another (a colon in a
    /// name splits Signal's `name:value` line elsewhere), so transports refuse the request.
    public func checkSendable() throws(TransportError) {
        for field in fields {
            guard HTTPSyntax.isToken(field.name) else {
                throw .invalidRequest("header name \(String(reflecting: String(field.name.prefix(100)))) is not an HTTP token")
            }
            guard !HTTPSyntax.hasNULCROrLF(field.value) else {
                throw .invalidRequest("the value of header '\(field.name)' holds NUL, CR or LF")
            }
        }
    }

    /// These headers without the ones ``checkSendable()`` refuses: for an answer that must go
    /// out whatever a handler put in it (a push's acknowledgement).
    public var sendableOnly: RPCHeaders {
        guard (try? checkSendable()) == nil else { return self }
        return RPCHeaders(fields.filter { HTTPSyntax.isToken($0.name) && !HTTPSyntax.hasNULCROrLF($0.value) })
    }
}
