import Foundation

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
///
/// A gRPC server's rich error status (`grpc-status-details-bin`) stays among the trailers and
/// is read, decoded, as ``grpcStatusDetails``: for a status the endpoint declares, which
/// becomes its typed error, this is the only place the details are kept.
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

    /// The trailer that carries gRPC's rich error status: a serialized `google.rpc.Status`,
    /// base64-encoded as every `-bin` metadata value is.
    public static let grpcStatusDetailsTrailer = "grpc-status-details-bin"

    /// The raw `grpc-status-details-bin` trailer of the last call, decoded from base64 (padded
    /// or not, as gRPC allows): over gRPC, usually a serialized `google.rpc.Status` whose
    /// `details` say more about the failure than its code does. Kept whether the status became
    /// one of the endpoint's declared errors (a `.nonSuccess` result, which has no room for
    /// it) or ``TransportError/grpcStatus(code:message:details:)``, whose `details` are the
    /// same bytes. `nil` when the server sent none, when the value is not base64, and over
    /// the WebSocket.
    ///
    /// ```swift
    /// let capture = ResponseCapture()
    /// if case .nonSuccess(.notFound) = await profiles.getProfile(request, options: CallOptions(responseCapture: capture)),
    ///    let details = capture.grpcStatusDetails {
    ///     // Decode `details` as a google.rpc.Status.
    /// }
    /// ```
    public var grpcStatusDetails: Data? {
        guard let text = trailers[Self.grpcStatusDetailsTrailer] else { return nil }
        // gRPC's senders may leave out base64's padding; Foundation's decoder wants it.
        var padded = text.trimmingCharacters(in: .whitespaces)
        while padded.utf8.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded)
    }

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
