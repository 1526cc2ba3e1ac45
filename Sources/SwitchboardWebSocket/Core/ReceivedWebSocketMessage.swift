import Foundation

/// A whole message as the engine received it, its payload still the engine's bytes.
///
/// The payload of a message that arrived in one read is a slice of the parser's buffer,
/// not a copy: a consumer that decodes it in place (an RPC layer reading its envelope)
/// never pays for `Data` or `String`. Keeping it past the handler that received it is safe
/// but makes the parser copy its buffer on the next read.
public struct ReceivedWebSocketMessage: Sendable, Hashable {
    /// Whether the message is text (already validated as UTF-8) or binary.
    public let isText: Bool
    /// The message's bytes.
    public let payload: ArraySlice<UInt8>

    /// Wraps a received payload.
    public init(isText: Bool, payload: ArraySlice<UInt8>) {
        self.isText = isText
        self.payload = payload
    }

    /// The message as `String` or `Data`: a copy of the payload.
    public var message: WebSocketMessage {
        // From the bytes directly: `Data(payload)` would box the slice first.
        isText ? .text(String(decoding: payload, as: UTF8.self)) : .binary(payload.withUnsafeBytes { Data($0) })
    }
}
