import SwitchboardHTTPSyntax
import SwitchboardRuntime

/// A connection's methods resolved from their paths, so that a call to a path seen before
/// costs a comparison, not a new RPC name, four suffix checks and two table lookups (about
/// 1,200 instructions a call). Used on the connection's loop only.
///
/// Bounded: ``capacity`` paths of at most ``longestPath`` bytes, and only paths something
/// serves (a router's method, or any service's event or acknowledgement method): a peer
/// sending made-up paths can at most replace its own connection's entries.
final class GRPCMethodCache {
    static let capacity = 8
    static let longestPath = 256

    private let router: RPCRouter
    private var entries: [(path: String, method: GRPCMethod)] = []
    /// Where the next entry goes once the cache is full: the oldest.
    private var next = 0

    /// How many paths are kept (for tests).
    var cachedPathCount: Int { entries.count }

    init(router: RPCRouter) {
        self.router = router
    }

    /// The method `path` (beginning with `/`) names.
    func method(forPath path: String) -> GRPCMethod {
        // By index: iterating copied each entry (its strings and route) for the comparison. A
        // repeated path usually arrives as the very string the HPACK decoder holds in its
        // table, found by its representation.
        for index in entries.indices where HTTPSyntax.sameBytes(entries[index].path, path) { return entries[index].method }
        let method = GRPCMethod(path: path, router: router)
        if case .unknown = method.kind { return method }
        guard path.utf8.count <= Self.longestPath else { return method }
        if entries.count < Self.capacity {
            entries.append((path, method))
        } else {
            entries[next] = (path, method)
            next = (next + 1) % Self.capacity
        }
        return method
    }
}
