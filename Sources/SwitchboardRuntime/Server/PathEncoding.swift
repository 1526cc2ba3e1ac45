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
        Array(text.utf8).withUnsafeBytes { Base64.decode($0) }.map { Data($0) }
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
