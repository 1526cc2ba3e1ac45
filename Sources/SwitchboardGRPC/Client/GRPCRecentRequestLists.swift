import SwitchboardHTTP2
import SwitchboardHTTPSyntax
import SwitchboardIO

/// A transport's last request header lists, so calls to the same method with the same
/// timeout text and shared metadata send the very same array: nothing is built per call, and
/// the connection's size check and HPACK memory know the list by its storage.
///
/// Bounded: ``capacity`` lists. Only lists whose metadata is one of the shared lists (see
/// ``GRPCSharedHeaderLists``) are kept, never a call's own metadata.
final class GRPCRecentRequestLists: @unchecked Sendable {
    static let capacity = 4

    private struct Entry {
        let path: String
        let timeout: String?
        let metadata: [HPACKHeader]
        let json: Bool
        let list: [HPACKHeader]
    }

    private let lock = AdaptiveLock()
    // Reached only under its lock, which already makes each access exclusive.
    @exclusivity(unchecked) private var entries = OldestReplacedList<Entry>(capacity: capacity)

    /// The list kept for these parts, if any. Strings are compared by representation (the
    /// same storage or the same small-string bits), the shared metadata by storage.
    func list(path: String, timeout: String?, metadata: [HPACKHeader], json: Bool) -> [HPACKHeader]? {
        lock.withLock {
            index(path: path, timeout: timeout, metadata: metadata, json: json).map { entries.elements[$0].list }
        }
    }

    /// Keeps `list` for these parts, in the place of the oldest once full, and returns what
    /// to send: a list kept meanwhile for the same parts (callers that start together all
    /// miss and build one each), else `list`.
    func keep(_ list: [HPACKHeader], path: String, timeout: String?, metadata: [HPACKHeader], json: Bool) -> [HPACKHeader] {
        let entry = Entry(path: path, timeout: timeout, metadata: metadata, json: json, list: list)
        return lock.withLock {
            if let index = index(path: path, timeout: timeout, metadata: metadata, json: json) {
                return entries.elements[index].list
            }
            entries.insert(entry)
            return list
        }
    }

    /// The entry for these parts; under the lock.
    /// (Most shared lists have no gRPC metadata at all: two empty lists are the same.)
    private func index(path: String, timeout: String?, metadata: [HPACKHeader], json: Bool) -> Int? {
        entries.elements.indices.first { index in
            entries.elements[index].json == json
                && HTTPSyntax.sameRepresentation(entries.elements[index].path, path)
                && Self.same(entries.elements[index].timeout, timeout)
                && (metadata.isEmpty ? entries.elements[index].metadata.isEmpty : HTTPSyntax.sameStorage(entries.elements[index].metadata, metadata))
        }
    }

    private static func same(_ lhs: String?, _ rhs: String?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case let (lhs?, rhs?): return HTTPSyntax.sameRepresentation(lhs, rhs)
        default: return false
        }
    }
}
