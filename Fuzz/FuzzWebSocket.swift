// libFuzzer entry point for the WebSocket sans-IO core: every input is fed to the frame
// engine (both roles, split at a point the input chooses) and to the HTTP head and
// handshake parsers. Any crash, hang or sanitizer report is a finding.
// Build and run with scripts/fuzz-websocket.sh.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocket(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    guard let first = bytes.first else { return 0 }
    let split = bytes.isEmpty ? 0 : Int(first) % max(1, bytes.count)

    for role in [WebSocketConnectionCore.Role.client, .server] {
        var core = WebSocketConnectionCore(role: role, configuration: .init(maximumMessageSize: 64 * 1024))
        _ = core.receive(bytes[..<split])
        _ = core.receive(bytes[split...])
        _ = core.close(code: .normalClosure, reason: "fuzz")
        _ = core.transportClosed()
    }

    if let (head, _) = try? HTTPHead.parse(bytes) {
        _ = try? WebSocketHandshake.parseUpgrade(head)
        let request = WebSocketHandshake.ClientRequest(host: "fuzz.example", port: 443, path: "/", isSecure: true, key: "dGhlIHNhbXBsZSBub25jZQ==")
        _ = try? request.validate(head, body: [])
    }
    var validator = UTF8StreamValidator()
    _ = validator.feed(bytes)
    return 0
}
