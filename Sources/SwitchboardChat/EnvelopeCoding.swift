import Foundation
import SignalChat
import SwitchboardRuntime

/// Headers travel in Signal's envelope as `name:value` strings.
enum EnvelopeHeaders {
    static func encode(_ headers: RPCHeaders) -> [String] {
        headers.map { field in
            var line = field.name
            line.reserveCapacity(field.name.utf8.count + 1 + field.value.utf8.count)
            line += ":"
            line += field.value
            return line
        }
    }

    /// Splits at the first colon and trims, as libsignal reads them; lines without one are dropped.
    static func decode(_ lines: [String]) -> RPCHeaders {
        var headers = RPCHeaders()
        headers.reserveCapacity(lines.count)
        for var line in lines {
            let colon: Int? = line.withUTF8 { bytes in
                guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
                // Headers are nearly always ASCII: trim bytes, without stepping through scalars.
                if let name = trimmedASCII(bytes[..<colon]), let value = trimmedASCII(bytes[(colon + 1)...]) {
                    headers.add(name, value)
                    return nil
                }
                return colon
            }
            guard let colon else { continue }
            let split = line.utf8.index(line.utf8.startIndex, offsetBy: colon)
            headers.add(trimmed(line[..<split]), trimmed(line[line.utf8.index(after: split)...]))
        }
        return headers
    }

    /// `bytes` without leading and trailing spaces and tabs; `nil` when an end that is left
    /// is not ASCII, because a non-ASCII blank (U+00A0...) might need trimming there too.
    private static func trimmedASCII(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        guard start == end || (bytes[start] < 0x80 && bytes[end - 1] < 0x80) else { return nil }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// `text` without leading and trailing blanks, as `CharacterSet.whitespaces` trims it;
    /// Foundation's trimming costs microseconds a header on Linux.
    static func trimmed(_ text: Substring) -> String {
        let scalars = text.unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, isBlank(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isBlank(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        return String(scalars[start..<end])
    }

    /// Exactly the scalars of `CharacterSet.whitespaces`: tab, the space separators, and U+200B.
    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x20, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }
}

extension WebSocketMessage {
    /// A request frame.
    static func request(verb: String, path: String, headers: RPCHeaders, body: Data?, id: UInt64) -> WebSocketMessage {
        WebSocketMessage(type: .request, request: WebSocketRequestMessage(
            verb: verb, path: path, body: body, headers: EnvelopeHeaders.encode(headers), id: id))
    }

    /// A response frame; `message` is always set because Signal's server closes with 1007 without it.
    static func response(to id: UInt64, _ response: RPCResponse) -> WebSocketMessage {
        WebSocketMessage(type: .response, response: WebSocketResponseMessage(
            id: id, status: UInt32(clamping: max(0, response.status)),
            message: response.message ?? (response.isSuccess ? "OK" : "Error"),
            headers: EnvelopeHeaders.encode(response.headers),
            body: response.body.isEmpty ? nil : response.body))
    }
}
