import Foundation
import SwitchboardRuntime

/// One request in the bridge's string form: REST semantics (verb, path, query, JSON body)
/// plus optional header lines, which carry per-request keys and header-bound fields.
public struct BridgeCommand: Sendable, Hashable {
    /// `GET`, `PUT`, `POST`, `PATCH` or `DELETE`.
    public var verb: String
    /// The path without its query, still percent-encoded.
    public var path: String
    /// The query without `?`, still percent-encoded; empty for none.
    public var query: String
    /// Header lines: keys by header or schema name, header-bound fields, anything else is sent as is.
    public var headers: RPCHeaders
    /// The JSON body; empty for none.
    public var body: Data

    /// A command from its parts. A `?` in `path` starts the query when `query` is empty.
    public init(verb: String, path: String, query: String = "", headers: RPCHeaders = [:], body: Data = Data()) {
        self.verb = verb
        if query.isEmpty, let mark = path.firstIndex(of: "?") {
            self.path = String(path[..<mark])
            self.query = String(path[path.index(after: mark)...])
        } else {
            self.path = path
            self.query = query.hasPrefix("?") ? String(query.dropFirst()) : query
        }
        self.headers = headers
        self.body = body
    }

    /// Parses the one-string form, tagged by its verb as an HTTP/1.1 request is:
    ///
    ///     VERB /path?query
    ///     Header-Name: value
    ///
    ///     {"json": "body"}
    ///
    /// or on one line, `VERB /path?query {"json": "body"}`. Header lines and the body are optional.
    /// The request line and header lines may take at most 64 KiB and 100 lines (the
    /// bridge's defaults); ``init(parsing:maximumHeadBytes:maximumHeaderLines:)`` takes others.
    public init(parsing text: String) throws(BridgeError) {
        try self.init(parsing: text, maximumHeadBytes: 64 << 10, maximumHeaderLines: 100)
    }

    /// Parses the one-string form, failing with `tooLarge` as soon as the request line and
    /// header lines pass `maximumHeadBytes` or the header lines pass `maximumHeaderLines`:
    /// a host's runaway string is refused before it is split into lines.
    public init(parsing text: String, maximumHeadBytes: Int, maximumHeaderLines: Int) throws(BridgeError) {
        func checkHead(upTo index: Substring.Index) throws(BridgeError) {
            let size = text.utf8.distance(from: text.startIndex, to: index)
            guard size <= maximumHeadBytes else {
                throw BridgeError(.tooLarge, "the command's request line and headers pass \(maximumHeadBytes) bytes")
            }
        }
        var rest = text[...]
        let verb = rest.prefix { $0 != " " }
        rest = rest.dropFirst(verb.count).drop { $0 == " " }
        let path = rest.prefix { $0 != " " && $0 != "\n" && $0 != "\r\n" && $0 != "\r" }
        rest = rest.dropFirst(path.count)
        try checkHead(upTo: rest.startIndex)
        guard !verb.isEmpty, verb.allSatisfy({ $0.isASCII && $0.isUppercase }), path.hasPrefix("/") else {
            throw BridgeError(.badCommand, "a command starts with a verb and a path, such as 'GET /v1/chats?limit=20'")
        }
        var headers = RPCHeaders()
        var body = Data()
        // Spaces or tabs and then a line end: the request line ends there (a trailing space
        // must not turn the header lines into a one-line form's body).
        let afterBlanks = rest.drop { $0 == " " || $0 == "\t" }
        if let next = afterBlanks.first, next == "\n" || next == "\r\n" || next == "\r" { rest = afterBlanks }
        if rest.first == " " {
            // One line: the rest of the text is the body.
            body = Data(rest.dropFirst().utf8)
        } else if !rest.isEmpty {
            rest = rest.dropFirst() // the request line's end ("\r\n" is one Character)
            // Header lines until a blank line; the body follows it.
            while !rest.isEmpty {
                let end = rest.firstIndex { $0 == "\n" || $0 == "\r\n" } ?? rest.endIndex
                try checkHead(upTo: end)
                var line = rest[..<end]
                rest = end == rest.endIndex ? "" : rest[rest.index(after: end)...]
                if line.hasSuffix("\r") { line = line.dropLast() }
                if line.isEmpty {
                    body = Data(rest.utf8)
                    break
                }
                guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                    throw BridgeError(.badCommand, "a header line has the form 'Name: value'")
                }
                headers.add(String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }))
                guard headers.fields.count <= maximumHeaderLines else {
                    throw BridgeError(.tooLarge, "the command has more than \(maximumHeaderLines) header lines")
                }
            }
        }
        self.init(verb: String(verb), path: String(path), headers: headers, body: body)
    }
}
