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
    static let indexOfName: [String: Int] = {
        var map: [String: Int] = [:]
        for (offset, entry) in entries.enumerated() where map[entry.name] == nil { map[entry.name] = offset + 1 }
        return map
    }()
}

/// A name and value together, as a lookup key.
struct HPACKFieldKey: Hashable {
    var name: String
    var value: String
}
