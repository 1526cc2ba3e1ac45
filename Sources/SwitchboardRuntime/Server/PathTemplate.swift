/// A path template such as `/v1/chats/{chatId}/messages`, matched segment by segment.
/// Each `{name}` is one whole segment. A query part (`?limit={limit}`) is not matched.
public struct PathTemplate: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    let segments: [Segment]
    /// The template as written.
    public let description: String

    /// Parses a template; the query part, if any, is ignored.
    public init(_ template: String) {
        description = template
        let path = template.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { part in
            if part.hasPrefix("{"), part.hasSuffix("}") {
                let inner = part.dropFirst().dropLast()
                return .parameter(String(inner.split(separator: ":").first ?? inner))
            }
            return .literal(String(part))
        }
    }

    /// The still-encoded values of the parameters if `path` (without query) matches.
    public func match(_ path: Substring) -> [String: String]? {
        // Walks the path's bytes once instead of splitting it: this runs on every request.
        let utf8 = path.utf8
        let slash = UInt8(ascii: "/")
        guard let firstSlash = utf8.firstIndex(of: slash) else { return segments.isEmpty ? [:] : nil }
        var start = utf8.index(after: firstSlash)
        var parameters: [String: String] = [:]
        for (position, segment) in segments.enumerated() {
            let end = utf8[start...].firstIndex(of: slash) ?? utf8.endIndex
            let part = path[start..<end]
            switch segment {
            case let .literal(text):
                guard part == text else { return nil }
            case let .parameter(name):
                guard !part.isEmpty else { return nil }
                parameters[name] = String(part)
            }
            if end == utf8.endIndex { return position == segments.count - 1 ? parameters : nil }
            start = utf8.index(after: end)
        }
        // More segments in the path than in the template.
        return nil
    }
}
