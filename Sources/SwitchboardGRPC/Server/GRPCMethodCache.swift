import SwitchboardHTTP2
import SwitchboardHTTPSyntax
import SwitchboardRuntime

/// A connection's methods resolved from their paths, so that a call to a path seen before
/// costs a comparison, not a new RPC name, four suffix checks and two table lookups (about
/// 1,200 instructions a call). Used on the connection's loop only.
///
/// Bounded: ``capacity`` paths of at most ``longestPath`` bytes, and only paths something
/// serves (a router's method, or the event or acknowledgement method of any service, or of
/// one in ``GRPCServerOptions/eventServices`` when it is set): a peer sending made-up paths
/// can at most replace its own connection's entries.
final class GRPCMethodCache {
    static let capacity = 8
    static let longestPath = 256

    private let router: RPCRouter
    /// The services whose event methods are served (``GRPCServerOptions/eventServices``);
    /// nil: every service's.
    private let eventServices: Set<String>?
    private var entries = OldestReplacedList<(path: String, method: GRPCMethod)>(capacity: capacity)

    /// How many paths are kept (for tests).
    var cachedPathCount: Int { entries.elements.count }

    init(router: RPCRouter, eventServices: Set<String>? = nil) {
        self.router = router
        self.eventServices = eventServices
    }

    /// The method `path` (beginning with `/`) names.
    func method(forPath path: String) -> GRPCMethod {
        // By index: iterating copied each entry (its strings and route) for the comparison. A
        // repeated path usually arrives as the very string the HPACK decoder holds in its
        // table, found by its representation.
        for index in entries.elements.indices where HTTPSyntax.sameBytes(entries.elements[index].path, path) { return entries.elements[index].method }
        let method = GRPCMethod(path: path, router: router, eventServices: eventServices)
        switch method.kind {
        case .unknown, .noEvents: return method
        case .message, .events, .acknowledge: break
        }
        guard path.utf8.count <= Self.longestPath else { return method }
        entries.insert((path, method))
        return method
    }
}
