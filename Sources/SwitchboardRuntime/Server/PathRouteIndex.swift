import Foundation

/// The routes whose path templates can match a path, found by walking a tree of template
/// segments once instead of trying every template: a server of a hundred endpoints matched
/// a hundred templates against every request.
///
/// It finds exactly the templates that ``PathTemplate`` would match (literal segments by
/// bytes, a parameter for any non-empty segment), in route order, so the router keeps its
/// rule: the first route that matches path, verb and connection serves.
///
/// The tree is flat arrays of plain values (no array per node), so walking it retains
/// nothing. Immutable once built, hence `@unchecked Sendable` (its literal bytes are raw memory).
final class PathRouteIndex: @unchecked Sendable {
    private struct Node: Sendable {
        /// This node's literal children: `edges[firstEdge ..< firstEdge + edgeCount]`,
        /// sorted by length, then bytes, for a binary search (a node can have a hundred).
        var firstEdge = 0
        var edgeCount = 0
        /// The child for a parameter (any non-empty segment), or -1.
        var parameter = -1
        /// The routes whose templates end here, in route order: `routes[firstRoute ..< firstRoute + routeCount]`.
        var firstRoute = 0
        var routeCount = 0
    }

    private struct Edge: Sendable {
        /// The literal segment: `literalBytes[offset ..< offset + length]`.
        var offset: Int
        var length: Int
        var child: Int
    }

    /// The routes a path can reach, in route order: most paths reach one, which needs no array.
    enum Candidates: Sequence, Equatable {
        case none
        case one(Int)
        case many([Int])
        /// Routes `0..<count`, all to be tried: for a router too small to index.
        case all(count: Int)

        mutating func add(_ route: Int) {
            switch self {
            case .none: self = .one(route)
            case let .one(first): self = .many([first, route])
            case let .many(all): self = .many(all + [route])
            case .all: break
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
                case let .all(count): return position < count ? position : nil
                }
            }
        }

        func makeIterator() -> Iterator { Iterator(candidates: self) }
    }

    // Owned memory, freed with the index: read through arrays, each access of a walk
    // retained and released its array.
    private let nodes: UnsafeMutableBufferPointer<Node>
    private let edges: UnsafeMutableBufferPointer<Edge>
    /// Every literal segment's bytes, one after another.
    private let literalBytes: UnsafeMutableBufferPointer<UInt8>
    private let routes: UnsafeMutableBufferPointer<Int>
    private let templates: [PathTemplate]
    /// The most segments any template has: the walk's depth, and its room for parameters.
    private let depth: Int

    /// Indexes `templates`; a route's number is its position here.
    init(_ templates: [PathTemplate]) {
        // Built as a tree of dictionaries, then laid out flat.
        var literalChildren: [[[UInt8]: Int]] = [[:]]
        var parameterChild = [-1]
        var routesAt: [[Int]] = [[]]
        for (route, template) in templates.enumerated() {
            var node = 0
            for segment in template.segments {
                let existing: Int?
                switch segment {
                case let .literal(text): existing = literalChildren[node][text]
                case .parameter: existing = parameterChild[node] >= 0 ? parameterChild[node] : nil
                }
                if let existing {
                    node = existing
                    continue
                }
                literalChildren.append([:])
                parameterChild.append(-1)
                routesAt.append([])
                let child = literalChildren.count - 1
                switch segment {
                case let .literal(text): literalChildren[node][text] = child
                case .parameter: parameterChild[node] = child
                }
                node = child
            }
            routesAt[node].append(route)
        }
        var nodes: [Node] = []
        var edges: [Edge] = []
        var literalBytes: [UInt8] = []
        var routes: [Int] = []
        for node in literalChildren.indices {
            let sorted = literalChildren[node].sorted { lhs, rhs in
                lhs.key.count != rhs.key.count ? lhs.key.count < rhs.key.count : lhs.key.lexicographicallyPrecedes(rhs.key)
            }
            nodes.append(Node(firstEdge: edges.count, edgeCount: sorted.count, parameter: parameterChild[node],
                              firstRoute: routes.count, routeCount: routesAt[node].count))
            for (segment, child) in sorted {
                edges.append(Edge(offset: literalBytes.count, length: segment.count, child: child))
                literalBytes += segment
            }
            routes += routesAt[node]
        }
        self.nodes = Self.copy(nodes)
        self.edges = Self.copy(edges)
        self.literalBytes = Self.copy(literalBytes)
        self.routes = Self.copy(routes)
        self.templates = templates
        depth = templates.map(\.segments.count).max() ?? 0
    }

    /// The routes whose templates match `path` (without its query), and, when exactly one
    /// does, its parameters: the router then need not match that template again.
    func match(_ path: Substring) -> (candidates: Candidates, parameters: PathParameters?) {
        match(path, withParameters: true)
    }

    /// The routes whose templates match `path` (without its query).
    func candidates(for path: Substring) -> Candidates { match(path, withParameters: false).candidates }

    private func match(_ path: Substring, withParameters: Bool) -> (candidates: Candidates, parameters: PathParameters?) {
        if let found = path.utf8.withContiguousStorageIfAvailable({ match(bytes: $0, withParameters: withParameters) }) { return found }
        return Array(path.utf8).withUnsafeBufferPointer { match(bytes: $0, withParameters: withParameters) }
    }

    private func match(bytes: UnsafeBufferPointer<UInt8>, withParameters: Bool) -> (candidates: Candidates, parameters: PathParameters?) {
        guard let first = bytes.first else {
            var found = Candidates.none
            for index in nodes[0].firstRoute..<nodes[0].firstRoute + nodes[0].routeCount { found.add(routes[index]) }
            // A template with no segments (``PathTemplate("")``) has no parameters.
            if case .one = found, withParameters { return (found, PathParameters()) }
            return (found, nil)
        }
        guard first == UInt8(ascii: "/") else { return (.none, nil) }
        // Parameter segments on the way down, and those of the first route found.
        let room = max(depth, 1)
        return withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: 2 * room) { ranges in
            var walk = Walk(index: self, bytes: bytes, ranges: UnsafeMutableBufferPointer(rebasing: ranges[0..<room]),
                            firstFound: UnsafeMutableBufferPointer(rebasing: ranges[room...]))
            walk.collect(from: 0, start: 1, parameters: 0)
            switch walk.found {
            case let .one(route):
                return (walk.found, withParameters ? parameters(of: route, bytes: bytes, ranges: walk.firstFound) : nil)
            case let .many(all):
                // The walk takes literal branches before parameter ones, not routes in order.
                return (.many(all.sorted()), nil)
            case .none, .all:
                return (.none, nil)
            }
        }
    }

    deinit {
        nodes.deallocate()
        edges.deallocate()
        literalBytes.deallocate()
        routes.deallocate()
    }

    private static func copy<Element>(_ elements: [Element]) -> UnsafeMutableBufferPointer<Element> {
        let memory = UnsafeMutableBufferPointer<Element>.allocate(capacity: max(elements.count, 1))
        _ = memory.initialize(from: elements)
        return UnsafeMutableBufferPointer(rebasing: memory[0..<elements.count])
    }

    /// The parameters of `route`'s template, from the segments the walk found for them.
    private func parameters(of route: Int, bytes: UnsafeBufferPointer<UInt8>, ranges: UnsafeMutableBufferPointer<Range<Int>>) -> PathParameters {
        var parameters = PathParameters()
        var next = 0
        for case let .parameter(name) in templates[route].segments {
            parameters.append(name: name, value: String(decoding: UnsafeBufferPointer(rebasing: bytes[ranges[next]]), as: UTF8.self))
            next += 1
        }
        return parameters
    }

    /// One walk down the tree for one path.
    private struct Walk {
        /// Outlived by the index, whose method runs the walk.
        unowned(unsafe) let index: PathRouteIndex
        let bytes: UnsafeBufferPointer<UInt8>
        /// The parameter segments of the branch being walked.
        let ranges: UnsafeMutableBufferPointer<Range<Int>>
        /// Those of the first route found.
        let firstFound: UnsafeMutableBufferPointer<Range<Int>>
        var found = Candidates.none

        /// Matches the segment starting at `start` against `node`'s children, then the rest
        /// below each child that matched. Each node is reached by one branch only, so a walk
        /// visits each at most once, however the path is made.
        mutating func collect(from node: Int, start: Int, parameters: Int) {
            var end = start
            while end < bytes.count, bytes[end] != UInt8(ascii: "/") { end += 1 }
            let part = UnsafeBufferPointer(rebasing: bytes[start..<end])
            let isLast = end == bytes.count
            let current = index.nodes[node]
            if let child = index.literalChild(current, part) {
                if isLast { reached(child, parameters: parameters) } else { collect(from: child, start: end + 1, parameters: parameters) }
            }
            if !part.isEmpty, current.parameter >= 0 {
                ranges[parameters] = start..<end
                if isLast {
                    reached(current.parameter, parameters: parameters + 1)
                } else {
                    collect(from: current.parameter, start: end + 1, parameters: parameters + 1)
                }
            }
        }

        /// The path ends at `node`: its routes match.
        mutating func reached(_ node: Int, parameters: Int) {
            let node = index.nodes[node]
            guard node.routeCount > 0 else { return }
            if found == .none {
                for slot in 0..<parameters { firstFound[slot] = ranges[slot] }
            }
            for position in node.firstRoute..<node.firstRoute + node.routeCount { found.add(index.routes[position]) }
        }
    }

    /// The child for the literal segment `part`, by binary search.
    private func literalChild(_ node: Node, _ part: UnsafeBufferPointer<UInt8>) -> Int? {
        var low = node.firstEdge
        var high = node.firstEdge + node.edgeCount
        while low < high {
            let middle = (low + high) / 2
            let edge = edges[middle]
            let order: Int32
            if edge.length != part.count {
                order = edge.length < part.count ? -1 : 1
            } else if part.isEmpty {
                return edge.child
            } else {
                order = memcmp(literalBytes.baseAddress! + edge.offset, part.baseAddress!, part.count)
            }
            if order == 0 { return edge.child }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }
}
