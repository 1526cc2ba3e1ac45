import SwitchboardHTTPSyntax

/// What may go into a handshake's head (RFC 9110 §5): a field name is a token, and a value
/// or reason phrase holds no line break or NUL. Checked before anything is sent, so a value
/// from configuration or a server can never end a header early and smuggle in another.
enum HTTPFieldSyntax {
    /// `tchar`s only (RFC 9110 §5.6.2).
    static func isToken(_ text: String) -> Bool { HTTPSyntax.isToken(text) }

    /// Visible characters, spaces, tabs and non-ASCII bytes; no other control character.
    static func isFieldValue(_ text: String) -> Bool { HTTPSyntax.isFieldValue(text) }

    /// A request target: visible ASCII only, so no space or line break can split the request line.
    static func isRequestTarget(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// Throws `invalidHTTP` naming the first header that cannot be sent.
    static func check(_ headers: [HTTPHeaderField]) throws(WebSocketError) {
        for header in headers {
            guard isToken(header.name) else { throw .invalidHTTP("header name \(String(reflecting: header.name)) is not an HTTP token") }
            guard isFieldValue(header.value) else { throw .invalidHTTP("the value of header '\(header.name)' holds a line break or control character") }
        }
    }
}
