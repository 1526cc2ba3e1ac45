/// What a request or push holds once decoded, as the memory budgets count it: the chat
/// client's queue of pushes (`PushBudget`), `ChatServer`'s requests in handlers
/// (`maximumRequestBytesInFlight`) and a gRPC subscription's queued pushes
/// (`GRPCClientOptions.maximumQueuedPushBytes`). One measure for every transport.
///
/// That is its envelope's (or message's) bytes (every string and the body are copies of them), plus an entry
/// for each header line and each query parameter (a name and a value, and a heap object for
/// each once it is too long to be stored inline), plus the request's own bookkeeping. A header
/// line costs 3 bytes on the wire and about 100 once decoded, so counting envelope bytes alone
/// would let a peer make the other side hold 30 times its budget.
package enum DecodedRequestSize {
    /// The bytes a decoded request of `envelopeBytes` on the wire, with `headerCount` header
    /// lines and `queryParameterCount` query parameters, is counted as holding.
    package static func bytes(envelopeBytes: Int, headerCount: Int, queryParameterCount: Int = 0) -> Int {
        envelopeBytes + (headerCount + queryParameterCount) * perHeader + perRequest
    }

    /// A header entry (two strings inline) and the object headers of two out-of-line strings;
    /// a decoded query parameter is the same pair.
    package static let perHeader = MemoryLayout<(name: String, value: String)>.stride + 2 * 32
    /// The request, the queue's node or the handler's task and context.
    package static let perRequest = 1024

    /// How many query parameters `path` decodes into at most: the non-empty `&`-separated
    /// parts after its first `?` (empty ones decode to nothing); none without a `?`.
    package static func queryParameterCount(inPath path: String) -> Int {
        let utf8 = path.utf8
        // Not `utf8.firstIndex(of:)`, which walks `String.Index` a byte at a time (about
        // 1,500 instructions for a 49-byte path, on every request a chat server reads).
        guard let mark = path.firstIndex(ofASCII: UInt8(ascii: "?")) else { return 0 }
        var count = 0
        var atPartStart = true
        for byte in utf8[utf8.index(after: mark)...] {
            if byte == UInt8(ascii: "&") {
                atPartStart = true
            } else if atPartStart {
                count += 1
                atPartStart = false
            }
        }
        return count
    }
}
