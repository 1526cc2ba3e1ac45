import Foundation

/// Failures shared by every endpoint: the request did not get a usable answer.
/// Endpoint-specific answers (404 and the like) are the endpoint's own error type.
public enum TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No response before the deadline.
    case timeout
    /// The connection closed before the response arrived: its ``DisconnectReason/kind`` says
    /// whether calling again may work (not after Signal's 4409, say).
    case disconnected(reason: DisconnectReason)
    /// The server asked to retry later (429 or 503 with `Retry-After`, when the endpoint does not
    /// declare it), or cannot take the request now and it was not sent: the server has not read
    /// what was already written to it, or allows no more streams and enough calls wait for one.
    case retryLater(retryAfter: Duration?)
    /// A 5xx status the endpoint does not declare.
    case serverError(status: Int)
    /// The calling task was cancelled.
    case cancelled
    /// A response that breaks the protocol, such as a malformed frame.
    case unexpectedResponse(String)
    /// A success whose body could not be decoded as the response message.
    case undecodableResponse(String)
    /// No connection is open (sessions fail fast instead of queueing).
    case notConnected
    /// The request could not be encoded (a timestamp JSON cannot express, say).
    case invalidRequest(String)
    /// No transport is configured for this RPC name.
    case unroutable(rpcName: String)
    /// A mock endpoint was called without a stub or a scripted result.
    case notStubbed(rpcName: String)
    /// A gRPC status other than OK that the endpoint does not declare as one of its errors:
    /// the code (gRPC's numbering, `NOT_FOUND` is 5), the `grpc-message`, and the raw
    /// `grpc-status-details-bin` (a serialized `google.rpc.Status`), if the server sent one.
    case grpcStatus(code: Int, message: String, details: Data?)
    /// The provider's service catalogue does not offer what the call needs; refused before
    /// anything was sent.
    case unavailable(ServiceUnavailability)

    public var description: String {
        switch self {
        case .timeout: return "the request timed out"
        case let .disconnected(reason): return "disconnected: \(reason)"
        case let .retryLater(after): return "retry later" + (after.map { " (after \($0))" } ?? "")
        case let .serverError(status): return "server error \(status)"
        case .cancelled: return "the request was cancelled"
        case let .unexpectedResponse(detail): return "unexpected response: \(detail)"
        case let .undecodableResponse(detail): return "undecodable response: \(detail)"
        case .notConnected: return "not connected"
        case let .invalidRequest(detail): return "invalid request: \(detail)"
        case let .unroutable(name): return "no transport routes \(name)"
        case let .notStubbed(name): return "\(name) is not stubbed: call stub(_:) or enqueue(_:) on its mock first"
        case let .grpcStatus(code, message, _):
            return "gRPC status \(code)" + (message.isEmpty ? "" : ": \(message)")
        case let .unavailable(reason): return "unavailable: \(reason)"
        }
    }
}
