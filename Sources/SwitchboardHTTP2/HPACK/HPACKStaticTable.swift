#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import SwitchboardHTTPSyntax

/// HPACK's static table (RFC 7541 Appendix A): indices 1 to 61.
enum HPACKStaticTable {
    static let entries: [(name: String, value: String)] = [
        (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"), (":path", "/index.html"),
        (":scheme", "http"), (":scheme", "https"), (":status", "200"), (":status", "204"), (":status", "206"),
        (":status", "304"), (":status", "400"), (":status", "404"), (":status", "500"), ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""), ("accept", ""),
        ("access-control-allow-origin", ""), ("age", ""), ("allow", ""), ("authorization", ""), ("cache-control", ""),
        ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""), ("content-length", ""),
        ("content-location", ""), ("content-range", ""), ("content-type", ""), ("cookie", ""), ("date", ""),
        ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""), ("if-match", ""),
        ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""), ("if-unmodified-since", ""),
        ("last-modified", ""), ("link", ""), ("location", ""), ("max-forwards", ""), ("proxy-authenticate", ""),
        ("proxy-authorization", ""), ("range", ""), ("referer", ""), ("refresh", ""), ("retry-after", ""),
        ("server", ""), ("set-cookie", ""), ("strict-transport-security", ""), ("transfer-encoding", ""),
        ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", ""),
    ]

    static var count: Int { entries.count }

    /// The index of the entry with this name and value, if any.
    static let indexOfField: [HPACKFieldKey: Int] = {
        var map: [HPACKFieldKey: Int] = [:]
        for (offset, entry) in entries.enumerated() {
            let key = HPACKFieldKey(name: entry.name, value: entry.value)
            if map[key] == nil { map[key] = offset + 1 }
        }
        return map
    }()

    /// The first index with this name, if any.
    static let indexOfName: [HPACKNameKey: Int] = {
        var map: [HPACKNameKey: Int] = [:]
        for (offset, entry) in entries.enumerated() where map[HPACKNameKey(entry.name)] == nil { map[HPACKNameKey(entry.name)] = offset + 1 }
        return map
    }()
}

/// A name and value together, as a lookup key: compared and hashed by their UTF-8 bytes.
/// `String` compares by canonical equivalence, so `café` written precomposed and decomposed
/// would be one key, and a field indexed for one would put the other's bytes on the wire.
struct HPACKFieldKey: Hashable {
    var name: String
    var value: String

    static func == (lhs: HPACKFieldKey, rhs: HPACKFieldKey) -> Bool {
        HPACKBytes.equal(lhs.name, rhs.name) && HPACKBytes.equal(lhs.value, rhs.value)
    }

    func hash(into hasher: inout Hasher) {
        HPACKBytes.hash(name, into: &hasher)
        HPACKBytes.hash(value, into: &hasher)
    }
}

/// A field name as a lookup key, compared and hashed by its bytes (see ``HPACKFieldKey``).
struct HPACKNameKey: Hashable {
    let name: String
    init(_ name: String) { self.name = name }
    static func == (lhs: HPACKNameKey, rhs: HPACKNameKey) -> Bool { HPACKBytes.equal(lhs.name, rhs.name) }
    func hash(into hasher: inout Hasher) { HPACKBytes.hash(name, into: &hasher) }
}

/// Text as HPACK sees it: its UTF-8 bytes.
enum HPACKBytes {
    /// Whether both hold the same bytes (the same storage is one comparison).
    @inline(__always)
    static func equal(_ lhs: String, _ rhs: String) -> Bool {
        // The same value (a connection's fixed headers, call after call): the same bytes,
        // seen in place; other strings are compared out of line.
        HTTPSyntax.sameRepresentation(lhs, rhs) || equalBytes(lhs, rhs)
    }

    /// Whether both hold the same bytes, for strings stored apart.
    private static func equalBytes(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8, right = rhs.utf8
        guard left.count == right.count else { return false }
        // Native strings lend their bytes (no copy, no retain); any other kind is walked.
        let same = left.withContiguousStorageIfAvailable { a in
            right.withContiguousStorageIfAvailable { b in
                a.isEmpty || a.baseAddress == b.baseAddress || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
            }
        }
        if let same, let same { return same }
        return left.elementsEqual(right)
    }

    /// Feeds the bytes and their count (so that name and value cannot trade bytes).
    static func hash(_ text: String, into hasher: inout Hasher) {
        let utf8 = text.utf8
        hasher.combine(utf8.count)
        let hashed: Void? = utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        if hashed == nil { Array(utf8).withUnsafeBytes { hasher.combine(bytes: $0) } }
    }
}
