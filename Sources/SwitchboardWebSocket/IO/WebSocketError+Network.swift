import SwitchboardIO

// In IO/, so the sans-IO core (Core/) builds without the I/O module, as the fuzzer builds it.
extension WebSocketError {
    /// A socket or TLS failure under the connection, as this module reports it.
    public init(_ error: NetworkError) {
        switch error {
        case let .io(reason): self = .io(reason)
        case let .timeout(what): self = .timeout(what)
        }
    }
}
