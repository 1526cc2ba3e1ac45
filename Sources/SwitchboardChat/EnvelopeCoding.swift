import Foundation
import SignalChat
import SwitchboardRuntime

/// Headers travel in Signal's envelope as `name:value` strings.
enum EnvelopeHeaders {
    static func encode(_ headers: RPCHeaders) -> [String] {
        headers.map { "\($0.name):\($0.value)" }
    }

    /// Splits at the first colon and trims, as libsignal reads them; lines without one are dropped.
    static func decode(_ lines: [String]) -> RPCHeaders {
        var headers = RPCHeaders()
        for line in lines {
            guard let colon = line.firstIndex(ofASCII: UInt8(ascii: ":")) else { continue }
            headers.add(trimmed(line[..<colon]), trimmed(line[line.utf8.index(after: colon)...]))
        }
        return headers
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
