/// Why a socket or TLS step failed: connecting, listening, accepting, securing, reading or
/// writing. Shared by every transport built on this module (WebSocket, HTTP/2 and gRPC), each
/// of which folds it into its own error at its public boundary.
public enum NetworkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The system or TLS refused, with its reason.
    case io(String)
    /// A deadline passed during `what` (resolving, connecting, the TLS handshake, a read).
    case timeout(String)

    public var description: String {
        switch self {
        case let .io(reason): return "I/O error: \(reason)"
        case let .timeout(what): return "timed out: \(what)"
        }
    }
}
