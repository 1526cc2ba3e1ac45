/// A frame's opcode (RFC 6455 §5.2). Reserved opcodes fail the connection.
public enum WebSocketOpcode: UInt8, Sendable, Hashable {
    /// A further fragment of the message begun by a text or binary frame.
    case continuation = 0x0
    /// The first, or only, frame of a text message.
    case text = 0x1
    /// The first, or only, frame of a binary message.
    case binary = 0x2
    /// Starts or answers the close handshake, with an optional code and reason.
    case close = 0x8
    /// Asks the peer for a pong with the same payload.
    case ping = 0x9
    /// Answers a ping, echoing its payload.
    case pong = 0xA

    /// Close, ping and pong.
    public var isControl: Bool { rawValue & 0x8 != 0 }
}
