import Foundation

/// A path template such as `/v1/chats/{chatId}/messages`, matched segment by segment.
/// Each `{name}` is one whole segment. A query part (`?limit={limit}`) is not matched.
public struct PathTemplate: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        /// A fixed segment, as UTF-8 bytes: matching compares memory.
        case literal([UInt8])
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
            return .literal(Array(part.utf8))
        }
    }

    /// The still-encoded values of the parameters if `path` (without query) matches.
    public func match(_ path: Substring) -> [String: String]? {
        parameters(matching: path)?.dictionary
    }

    /// The still-encoded parameters, in template order, if `path` (without query) matches.
    public func parameters(matching path: Substring) -> PathParameters? {
        if let result = path.utf8.withContiguousStorageIfAvailable({ match(bytes: $0) }) { return result }
        return Array(path.utf8).withUnsafeBufferPointer { match(bytes: $0) }
    }

    /// Walks the path's bytes once instead of splitting it: this runs on every request.
    private func match(bytes: UnsafeBufferPointer<UInt8>) -> PathParameters? {
        let slash = UInt8(ascii: "/")
        // The path starts with its `/`: anything before it (`x/v1/profile`) is another path,
        // which an interceptor checking the path's prefix would not recognise as this one.
        guard let first = bytes.first else { return segments.isEmpty ? [:] : nil }
        guard first == slash else { return nil }
        var start = 1
        var parameters = PathParameters()
        for (position, segment) in segments.enumerated() {
            var end = start
            while end < bytes.count, bytes[end] != slash { end += 1 }
            let part = UnsafeBufferPointer(rebasing: bytes[start..<end])
            switch segment {
            case let .literal(text):
                guard text.count == part.count,
                      part.isEmpty || text.withUnsafeBufferPointer({ memcmp($0.baseAddress!, part.baseAddress!, part.count) == 0 })
                else { return nil }
            case let .parameter(name):
                guard !part.isEmpty else { return nil }
                parameters.append(name: name, value: String(decoding: part, as: UTF8.self))
            }
            if end == bytes.count { return position == segments.count - 1 ? parameters : nil }
            start = end + 1
        }
        // More segments in the path than in the template.
        return nil
    }
}
