import Foundation
import SwitchboardHTTP2
import SwitchboardHTTPSyntax
import SwitchboardRuntime

/// How gRPC carries metadata in HTTP/2 headers: lowercase names, `-bin` values in base64,
/// and `grpc-message` percent-encoded.
public enum GRPCMetadata {
    /// Names a call's metadata may not use: HTTP/2's and gRPC's own.
    static let reservedNames: Set<String> = ["content-type", "te", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding",
                                             "grpc-status", "grpc-message", "grpc-status-details-bin", "user-agent", "accept",
                                             "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"]

    /// gRPC's content types as header fields, made once for every call to share.
    static let protobufContentType = HPACKHeader("content-type", "application/grpc")
    static let jsonContentType = HPACKHeader("content-type", "application/grpc+json")

    /// Whether metadata may not use `name`: every `grpc-` name is gRPC's own, and the rest
    /// are HTTP/2's.
    static func isReserved(_ name: String) -> Bool {
        // Asked for every header of every call: compared without hashing.
        reservedNameSet.contains(name) || name.hasBytePrefix("grpc-") || name.hasBytePrefix("switchboard-")
    }

    /// ``isReserved(_:)`` for a name in any case, without lowering it: ASCII letters are
    /// folded. A name beyond ASCII may lowercase to a reserved one and not be found here, so
    /// callers check its lowered form too.
    static func isReserved(anyCase name: String) -> Bool {
        reservedNameSet.containsLowercased(name) || name.hasBytePrefix(ignoringASCIICase: "grpc-")
            || name.hasBytePrefix(ignoringASCIICase: "switchboard-")
    }

    private static let reservedNameSet = HTTPFieldNameSet(reservedNames)

    /// `text` cut to at most `limit` UTF-8 bytes, on a character boundary, marked when cut.
    static func truncated(_ text: String, toBytes limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        // One pass over the kept characters only: the text can be a whole error page.
        var bytes = 0
        var end = text.startIndex
        for character in text {
            let size = character.utf8.count
            guard bytes + size <= limit - 3 else { break }
            bytes += size
            end = text.index(after: end)
        }
        return text[..<end] + "…"
    }

    /// A `-bin` value as sent: base64 without padding, as the spec prefers.
    static func encodeBinary(_ data: Data) -> String {
        var text = data.base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// `grpc-message` as sent: bytes outside printable ASCII and `%` percent-encoded, and a
    /// space at either end too (HTTP/2 field values may not begin or end with one).
    public static func encodeMessage(_ message: String) -> String {
        var encoded = ""
        let utf8 = message.utf8
        for (offset, byte) in utf8.enumerated() {
            let atEdge = offset == 0 || offset == utf8.count - 1
            if byte >= 0x20, byte <= 0x7e, byte != UInt8(ascii: "%"), !(byte == 0x20 && atEdge) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }

    /// `grpc-message` as received, decoded; malformed escapes are kept as they are.
    public static func decodeMessage(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// A `-bin` value decoded (padded or not, as the spec allows).
    public static func decodeBinary(_ text: String) -> Data? {
        var padded = text.trimmingCharacters(in: .whitespaces)
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded)
    }

    /// `name` in lowercase, as HTTP/2 wants it; one already lowercase (most) is not copied.
    static func lowercasedName(_ name: String) -> String {
        var name = name
        // Over the bytes, borrowed (walking the UTF-8 view checked each index on the way).
        return name.withUTF8 { bytes in
            var hasUppercase = false, isASCII = true
            for byte in bytes {
                if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { hasUppercase = true } else if byte >= 0x80 { isASCII = false }
            }
            // Beyond ASCII any letter may have a lowercase form (`É`), so such names are lowered.
            guard hasUppercase || !isASCII else { return nil }
            guard isASCII else { return String(decoding: bytes, as: UTF8.self).lowercased() }
            // ASCII (every valid name): without the standard library's Unicode case mapping,
            // which cost about 200 instructions for a short name.
            return String(unsafeUninitializedCapacity: bytes.count) { buffer in
                for (index, byte) in bytes.enumerated() {
                    buffer[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                }
                return bytes.count
            }
        } ?? name
    }

    /// Throws ``TransportError/invalidRequest(_:)`` for a header that cannot be call metadata:
    /// one no transport can send (``RPCHeaders/checkSendable()``), or a name that is not
    /// lowercase letters, digits, `-`, `_` and `.` once lowercased (gRPC's metadata keys).
    /// Reserved names (`content-type`, `te`, `grpc-*`) are no problem: the transport sets
    /// those itself and drops the request's.
    static func checkSendable(_ headers: RPCHeaders) throws(TransportError) {
        // One pass, no lowercased copies: a key's characters, in either case, are all tokens,
        // so this covers `RPCHeaders.checkSendable()`'s rule for names too.
        for (name, value) in headers {
            let isKey = { (bytes: UnsafeBufferPointer<UInt8>) in !bytes.isEmpty && bytes.allSatisfy(HTTPSyntax.isGRPCKeyByte) }
            guard name.utf8.withContiguousStorageIfAvailable(isKey) ?? Array(name.utf8).withUnsafeBufferPointer(isKey) else {
                throw .invalidRequest("header name \(String(reflecting: String(name.prefix(100)))) cannot be gRPC metadata (letters, digits, '-', '_' and '.' only)")
            }
            guard !HTTPSyntax.hasNULCROrLF(value) else {
                throw .invalidRequest("the value of header '\(name)' holds NUL, CR or LF")
            }
        }
    }

    /// A request's headers as call metadata: lowercased, reserved names dropped, secrets
    /// never indexed by HPACK. The headers passed ``checkSendable(_:)`` first (a call's in
    /// `send`, the transport's when it was made), so names and values are not checked again.
    static func requestMetadata(_ headers: RPCHeaders) -> [HPACKHeader] {
        var fields: [HPACKHeader] = []
        appendRequestMetadata(headers, to: &fields)
        return fields
    }

    /// ``requestMetadata(_:)`` appended to `fields`: a call's list is built in one array,
    /// not through a second one.
    static func appendRequestMetadata(_ headers: RPCHeaders, to fields: inout [HPACKHeader]) {
        for (name, value) in headers {
            // Before lowering: most calls carry only names the transport drops (`Accept`,
            // `Content-Type`), and lowering each made a new string.
            guard !isReserved(anyCase: name) else { continue }
            let lowered = lowercasedName(name)
            guard !isReserved(lowered) else { continue }
            // A secret kept out of HPACK's tables cannot be guessed through compression.
            fields.append(HPACKHeader(lowered, sendable(value), indexing: LogRedaction.showsValue(ofHeader: lowered) ? .automatic : .never))
        }
    }

    /// A response's headers as metadata: lowercased, reserved names, `Content-Type` and
    /// headers HTTP/2 cannot carry dropped, secrets never indexed by HPACK.
    static func responseMetadata(_ headers: RPCHeaders) -> [HPACKHeader] {
        var fields: [HPACKHeader] = []
        for (name, value) in headers {
            // Before lowering: a response's `Content-Type` is dropped without a lowered copy.
            guard !isReserved(anyCase: name) else { continue }
            let lowered = lowercasedName(name)
            guard lowered != "content-type", !isReserved(lowered), isValidName(lowered), isValidValue(value, name: lowered) else { continue }
            fields.append(HPACKHeader(lowered, sendable(value), indexing: LogRedaction.showsValue(ofHeader: lowered) ? .automatic : .never))
        }
        return fields
    }

    static func isValidName(_ name: String) -> Bool {
        // Lowercase only: this is the key as sent.
        !name.isEmpty && name.utf8.allSatisfy { HTTPSyntax.isGRPCKeyByte($0) && !($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }
    }

    /// Whether a metadata value can be sent at all: HTTP/2 cannot carry NUL, CR or LF.
    /// (Text beyond ASCII goes as its UTF-8 bytes, which gRPC's C core and Python accept.)
    static func isValidValue(_ value: String, name: String) -> Bool {
        // The same check the HTTP/2 layer applies to what it receives.
        !HTTPSyntax.hasNULCROrLF(value)
    }

    /// A value as sent: without spaces or tabs at either end, which HTTP/2 field values may
    /// not have (RFC 9113 §8.2.1; a strict peer resets the stream).
    static func sendable(_ value: String) -> String {
        guard let first = value.utf8.first, let last = value.utf8.last,
              first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 else { return value }
        return value.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }
}
