import Foundation

/// The routes whose path templates can match a path, found by walking a tree of template
/// segments once instead of trying every template: a server of a hundred endpoints matched
/// a hundred templates against every request.
///
/// It finds exactly the templates that ``PathTemplate`` would match (literal segments by
/// bytes, a parameter for any non-empty segment), in route order, so the router keeps its
/// rule: the first route that matches path, verb and connection serves.
struct PathRouteIndex: Sendable {
    private struct Node: Sendable {
        /// Children by literal segment (an empty literal matches an empty segment).
        var literals: [(segment: [UInt8], child: Int)] = []
        /// The child for a parameter: any non-empty segment.
        var parameter: Int?
        /// The routes whose templates end here, in route order.
        var routes: [Int] = []
    }

    /// The routes a path can reach, in route order: most paths reach one, which needs no array.
    enum Candidates: Sequence, Equatable {
        case none
        case one(Int)
        case many([Int])

        mutating func add(_ routes: [Int]) {
            for route in routes {
                switch self {
                case .none: self = .one(route)
                case let .one(first): self = .many([first, route])
                case let .many(all): self = .many(all + [route])
                }
            }
        }

        struct Iterator: IteratorProtocol {
            let candidates: Candidates
            var position = 0

            mutating func next() -> Int? {
                defer { position += 1 }
                switch candidates {
                case .none: return nil
                case let .one(route): return position == 0 ? route : nil
                case let .many(all): return position < all.count ? all[position] : nil
                }
            }
        }

        func makeIterator() -> Iterator { Iterator(candidates: self) }
    }

    private var nodes = [Node()]

    /// Indexes `templates`; a route's number is its position here.
    init(_ templates: [PathTemplate]) {
        var literalChildren: [[[UInt8]: Int]] = [[:]]
        for (route, template) in templates.enumerated() {
            var node = 0
            for segment in template.segments {
                switch segment {
                case let .literal(text):
                    if let existing = literalChildren[node][text] {
                        node = existing
                    } else {
                        nodes.append(Node())
                        literalChildren.append([:])
                        literalChildren[node][text] = nodes.count - 1
                        node = nodes.count - 1
                    }
                case .parameter:
                    if let existing = nodes[node].parameter {
                        node = existing
                    } else {
                        nodes.append(Node())
                        literalChildren.append([:])
                        nodes[node].parameter = nodes.count - 1
                        node = nodes.count - 1
                    }
                }
            }
            nodes[node].routes.append(route)
        }
        // Sorted by length, then bytes, for a binary search: a node can have a hundred children.
        for node in nodes.indices {
            nodes[node].literals = literalChildren[node].map { (segment: $0.key, child: $0.value) }.sorted { lhs, rhs in
                lhs.segment.count != rhs.segment.count ? lhs.segment.count < rhs.segment.count : lhs.segment.lexicographicallyPrecedes(rhs.segment)
            }
        }
    }

    /// The child of `node` for the literal segment `part`, by binary search.
    private func literalChild(of node: Int, _ part: UnsafeBufferPointer<UInt8>) -> Int? {
        let literals = nodes[node].literals
        var low = 0
        var high = literals.count
        while low < high {
            let middle = (low + high) / 2
            let order = Self.compare(literals[middle].segment, part)
            if order == 0 { return literals[middle].child }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    /// The order of the sort above: negative if `segment` comes before `part`.
    private static func compare(_ segment: [UInt8], _ part: UnsafeBufferPointer<UInt8>) -> Int {
        if segment.count != part.count { return segment.count < part.count ? -1 : 1 }
        if part.isEmpty { return 0 }
        return Int(segment.withUnsafeBufferPointer { memcmp($0.baseAddress!, part.baseAddress!, part.count) })
    }

    /// The routes whose templates match `path` (without its query).
    func candidates(for path: Substring) -> Candidates {
        if let found = path.utf8.withContiguousStorageIfAvailable({ candidates(bytes: $0) }) { return found }
        return Array(path.utf8).withUnsafeBufferPointer { candidates(bytes: $0) }
    }

    private func candidates(bytes: UnsafeBufferPointer<UInt8>) -> Candidates {
        var found = Candidates.none
        guard let first = bytes.first else {
            found.add(nodes[0].routes)
            return found
        }
        guard first == UInt8(ascii: "/") else { return .none }
        collect(from: 0, bytes: bytes, start: 1, into: &found)
        // The walk takes literal branches before parameter ones, not routes in order.
        if case let .many(all) = found { return .many(all.sorted()) }
        return found
    }

    /// Matches the segment starting at `start` against `node`'s children, then the rest
    /// below each child that matched. Depth is the path's segment count, bounded by the
    /// deepest template: a branch ends where the tree does.
    private func collect(from node: Int, bytes: UnsafeBufferPointer<UInt8>, start: Int, into found: inout Candidates) {
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "/") { end += 1 }
        let part = UnsafeBufferPointer(rebasing: bytes[start..<end])
        let isLast = end == bytes.count
        if let child = literalChild(of: node, part) {
            if isLast { found.add(nodes[child].routes) } else { collect(from: child, bytes: bytes, start: end + 1, into: &found) }
        }
        if !part.isEmpty, let child = nodes[node].parameter {
            if isLast { found.add(nodes[child].routes) } else { collect(from: child, bytes: bytes, start: end + 1, into: &found) }
        }
    }
}
