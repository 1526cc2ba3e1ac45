/// A frame's opcode (RFC 6455 §5.2). Reserved opcodes fail the connection.
public enum WebSocketOpcode: UInt8, Sendable, Hashable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong.
    public var isControl: Bool { rawValue & 0x8 != 0 }
}
