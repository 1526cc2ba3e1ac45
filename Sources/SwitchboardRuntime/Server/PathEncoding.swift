import Foundation

/// Encodes field values into paths, queries and headers, and back.
public enum PathEncoding {
    /// Whether each byte value is in RFC 3986's unreserved set, indexed by the byte.
    static let unreserved: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8 { table[Int(byte)] = true }
        return table
    }()

    /// Percent-encodes every byte outside RFC 3986's unreserved set.
    public static func percentEncode(_ value: String) -> String {
        let table = unreserved
        // Most values (ids, hashes in base64url) need no escape: keep the string as it is.
        let plain = value.utf8.withContiguousStorageIfAvailable { bytes in
            table.withUnsafeBufferPointer { table in bytes.allSatisfy { table[Int($0)] } }
        } ?? value.utf8.allSatisfy { table[Int($0)] }
        if plain { return value }
        var output: [UInt8] = []
        output.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if table[Int(byte)] {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0xF)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// The first segment of `path` (its query ignored) that is a dot-segment: `.` or `..`,
    /// each dot written plain or as `%2E`. RFC 3986 normalisation (section 5.2.4) removes such
    /// a segment, `..` with the one before it, and WHATWG URL parsers read `%2E` as a dot
    /// too, so a path parameter of `..` (`/v1/chats/../read`) would reach another resource.
    /// `nil` when there is none. ``percentEncode(_:)`` leaves a value of `.` or `..` as it is,
    /// so ``RPCCall/send(_:over:options:)`` refuses a request whose path has one.
    public static func dotSegment(in path: String) -> String? {
        // Outer optional: whether the string had contiguous storage; inner: the answer.
        if let answer = path.utf8.withContiguousStorageIfAvailable({ firstDotSegment($0) }) { return answer }
        return Array(path.utf8).withUnsafeBufferPointer { firstDotSegment($0) }
    }

    /// ``dotSegment(in:)`` over the path's bytes, walked once without splitting: it runs on
    /// every call.
    static func firstDotSegment(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        // Every dot-segment holds a `.` or a `%`, and most paths neither: the C library's
        // vectorised search looks for each before any walk (the walk cost about 700
        // instructions a call for a 49-byte path).
        guard let base = bytes.baseAddress,
              memchr(base, Int32(UInt8(ascii: ".")), bytes.count) != nil || memchr(base, Int32(UInt8(ascii: "%")), bytes.count) != nil
        else { return nil }
        var start = 0
        var index = 0
        while true {
            let atEnd = index == bytes.count || bytes[index] == UInt8(ascii: "?")
            if atEnd || bytes[index] == UInt8(ascii: "/") {
                let segment = UnsafeBufferPointer(rebasing: bytes[start..<index])
                if isDotSegment(segment) { return String(decoding: segment, as: UTF8.self) }
                if atEnd { return nil }
                start = index + 1
            }
            index += 1
        }
    }

    /// Whether `segment` is one or two dots, each plain or `%2E` (`%2e`).
    static func isDotSegment(_ segment: UnsafeBufferPointer<UInt8>) -> Bool {
        // At most two dots of three bytes each.
        guard !segment.isEmpty, segment.count <= 6 else { return false }
        var dots = 0
        var index = 0
        while index < segment.count {
            if segment[index] == UInt8(ascii: ".") {
                index += 1
            } else if segment[index] == UInt8(ascii: "%"), index + 2 < segment.count,
                      segment[index + 1] == UInt8(ascii: "2"), segment[index + 2] | 0x20 == UInt8(ascii: "e") {
                index += 3
            } else {
                return false
            }
            dots += 1
        }
        return dots <= 2
    }

    /// The name of the first path parameter of `template` (a whole segment, `{name}` or
    /// `{name:encoding}`) that `path` leaves empty, as in `/v1/profile//2` or a trailing
    /// `/v1/accounts/username_hash/`. A server's router refuses such a path or, where it
    /// ignores an empty segment or a trailing slash, serves another resource with it, so
    /// ``RPCCall/send(_:over:options:)`` refuses the call. `nil` when every parameter has a
    /// value, and also when `path` does not follow `template` (a path an interceptor or a
    /// hand-built request chose): that is not this check's to judge. Query parts are ignored.
    public static func emptyParameter(in path: String, template: String) -> Substring? {
        // Most endpoints have no parameter in their path: nothing to walk.
        guard template.containsASCII(UInt8(ascii: "{")) else { return nil }
        var template = template
        var path = path
        return template.withUTF8 { templateBytes in
            path.withUTF8 { pathBytes in
                guard let range = firstEmptyParameter(pathBytes, template: templateBytes) else { return nil }
                return Substring(String(decoding: UnsafeBufferPointer(rebasing: templateBytes[range]), as: UTF8.self))
            }
        }
    }

    /// ``emptyParameter(in:template:)`` over bytes: both walked once, segment by segment;
    /// the range of the empty parameter's name in `template`.
    static func firstEmptyParameter(_ path: UnsafeBufferPointer<UInt8>, template: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        // An empty parameter is an empty segment of the path; most paths have none, which
        // a search for slashes shows without walking the template beside it.
        guard hasEmptySegment(path) else { return nil }
        let slash = UInt8(ascii: "/"), question = UInt8(ascii: "?")
        func segmentEnd(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
            var end = start
            while end < bytes.count, bytes[end] != slash, bytes[end] != question { end += 1 }
            return end
        }
        var t = 0, p = 0
        while t < template.count, p < path.count, template[t] == slash, path[p] == slash {
            let templateEnd = segmentEnd(template, from: t + 1)
            let pathEnd = segmentEnd(path, from: p + 1)
            let segment = UnsafeBufferPointer(rebasing: template[(t + 1)..<templateEnd])
            if segment.count >= 2, segment.first == UInt8(ascii: "{"), segment.last == UInt8(ascii: "}") {
                if pathEnd == p + 1 {
                    var nameEnd = t + 2
                    while nameEnd < templateEnd - 1, template[nameEnd] != UInt8(ascii: ":") { nameEnd += 1 }
                    return (t + 2)..<nameEnd
                }
            } else if !segment.elementsEqual(UnsafeBufferPointer(rebasing: path[(p + 1)..<pathEnd])) {
                return nil
            }
            t = templateEnd
            p = pathEnd
        }
        return nil
    }

    /// Whether a segment of `path` (its query ignored) after a slash is empty: `//`, or a slash
    /// at the end of the path.
    static func hasEmptySegment(_ path: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = path.baseAddress else { return false }
        let end = memchr(base, Int32(UInt8(ascii: "?")), path.count).map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? path.count
        var from = 0
        while from < end, let slash = memchr(base + from, Int32(UInt8(ascii: "/")), end - from) {
            let next = UnsafeRawPointer(slash) - UnsafeRawPointer(base) + 1
            if next == end || base[next] == UInt8(ascii: "/") { return true }
            from = next
        }
        return false
    }

    /// Decodes `%XX` escapes; `nil` for a bad escape or invalid UTF-8.
    public static func percentDecode(_ value: Substring) -> String? {
        // Without escapes there is nothing to decode, and a Swift string is valid UTF-8.
        if !value.containsASCII(UInt8(ascii: "%")) { return String(value) }
        var bytes: [UInt8] = []
        var iterator = Array(value.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes.withUnsafeBytes { UTF8Validation.isValid($0) } ? String(decoding: bytes, as: UTF8.self) : nil
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - 48
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - 87
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - 55
        default: return nil
        }
    }

    /// Unpadded base64url, the form Signal uses for bytes in paths.
    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Decodes base64url (or standard base64), padded or not.
    public static func base64URLDecode(_ text: Substring) -> Data? {
        Array(text.utf8).withUnsafeBytes { Base64.decodeData($0) }
    }

    /// Splits `a=1&b=2` into decoded pairs, in order; `nil` if any part is malformed.
    public static func parseQuery(_ query: Substring) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for part in query.split(separator: "&", omittingEmptySubsequences: true) {
            let halves = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = percentDecode(halves[0]), let value = percentDecode(halves.count > 1 ? halves[1] : "") else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }
}
