/// Keeps what came back with a call besides its message: the response's status and headers
/// (over gRPC, its initial and trailing metadata), for a caller that needs an `ETag`, a
/// request id or rate-limit figures. Pass one in ``CallOptions/responseCapture`` and read it
/// once the call has returned:
///
/// ```swift
/// let capture = ResponseCapture()
/// let result = await profiles.getProfile(request, options: CallOptions(responseCapture: capture))
/// let etag = capture.headers["ETag"]
/// ```
///
/// It holds the response of the last call it was given to. After a call that got no response
/// (a transport failure) it holds no status, and only what metadata came with the failure (a
/// gRPC status the endpoint does not declare, with its trailers), if any. Over gRPC the
/// headers are the initial metadata followed by the trailing metadata. A mock fills it with
/// the headers its endpoint was given (``MockEndpoint/setResponseHeaders(_:)``).
// Sendable: its state is only reached under its stripe of `StripedLock`.
public final class ResponseCapture: @unchecked Sendable, Hashable {
    private var recordedStatus: Int?
    private var recordedHeaders = RPCHeaders()
    private var recordedTrailers = RPCHeaders()

    /// An empty capture.
    public init() {}

    /// The response's HTTP-like status, once one came.
    public var status: Int? { StripedLock.withLock(for: self) { recordedStatus } }

    /// The response's headers; empty until one came.
    public var headers: RPCHeaders { StripedLock.withLock(for: self) { recordedHeaders } }

    /// What came after the body: over gRPC the trailing metadata (also among ``headers``);
    /// empty on the WebSocket.
    public var trailers: RPCHeaders { StripedLock.withLock(for: self) { recordedTrailers } }

    /// Records `response`; called by ``RPCCall`` (and custom call paths) when one arrives.
    public func record(_ response: RPCResponse) {
        StripedLock.withLock(for: self) {
            recordedStatus = response.status
            recordedHeaders = response.headers
            recordedTrailers = response.trailers
        }
    }

    /// Records a status (nil when there is none, as with a failure that brought metadata),
    /// headers and trailers. A transport that records a failure's metadata empties the
    /// capture as each attempt starts (``reset()``), so a retried call keeps only its last.
    public func record(status: Int?, headers: RPCHeaders, trailers: RPCHeaders = [:]) {
        StripedLock.withLock(for: self) {
            recordedStatus = status
            recordedHeaders = headers
            recordedTrailers = trailers
        }
    }

    /// Empties it: no status, no headers.
    public func reset() {
        StripedLock.withLock(for: self) {
            recordedStatus = nil
            recordedHeaders = RPCHeaders()
            recordedTrailers = RPCHeaders()
        }
    }

    /// Captures are compared by identity.
    public static func == (lhs: ResponseCapture, rhs: ResponseCapture) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
