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
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(line[..<colon].trimmingCharacters(in: .whitespaces), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return headers
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
