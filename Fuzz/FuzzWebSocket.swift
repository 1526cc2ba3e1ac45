// libFuzzer entry point for the WebSocket sans-IO core: every input is fed to the frame
// engine (both roles) and to the HTTP head and handshake parsers. Any crash, hang or
// sanitizer report is a finding, and so is a delivered payload that changes afterwards.
// Build and run with scripts/fuzz-websocket.sh.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocket(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    guard !bytes.isEmpty else { return 0 }
    // Up to four reads, cut where the input's first bytes say, as a socket would split it.
    let cuts = bytes.prefix(3).map { Int($0) * bytes.count / 256 }.sorted() + [bytes.count]

    for role in [WebSocketConnectionCore.Role.client, .server] {
        var core = WebSocketConnectionCore(role: role, configuration: .init(maximumMessageSize: 64 * 1024))
        // The connection's path: the appending receive, whose payloads are slices of the
        // parser's buffer (unmasked in place). Every slice is kept across the later reads,
        // which must never change it.
        var actions: [WebSocketConnectionCore.Action] = []
        var delivered: [(slice: ArraySlice<UInt8>, copy: [UInt8])] = []
        var from = 0
        for cut in cuts {
            bytes[from..<cut].withUnsafeBytes { core.receive($0, into: &actions) }
            for case let .deliver(message) in actions { delivered.append((message.payload, Array(message.payload))) }
            actions.removeAll(keepingCapacity: true)
            from = cut
        }
        _ = core.close(code: .normalClosure, reason: "fuzz")
        _ = core.transportClosed()
        for (slice, copy) in delivered where !slice.elementsEqual(copy) {
            fatalError("a delivered payload changed under a later read")
        }
    }

    if let (head, _) = try? HTTPHead.parse(bytes) {
        _ = try? WebSocketHandshake.parseUpgrade(head)
        var request = WebSocketHandshake.ClientRequest(host: "fuzz.example", port: 443, path: "/", isSecure: true, key: "dGhlIHNhbXBsZSBub25jZQ==")
        _ = try? request.validate(head, body: [])
        // What was parsed, offered for sending: a request that passes the check must read
        // back with exactly the headers it was given, none split or smuggled in.
        let bare = request
        request.path = head.startLine.dropFirst().first ?? "/"
        request.headers = head.headers
        if (try? request.checkSendable()) != nil {
            let sent = try? HTTPHead.parse(request.bytes), plain = try? HTTPHead.parse(bare.bytes)
            guard let sent, let plain, sent.0.headers.count == plain.0.headers.count + request.headers.count else {
                fatalError("a request that passed checkSendable does not read back as sent")
            }
        }
    }
    var validator = UTF8StreamValidator()
    _ = validator.feed(bytes)
    return 0
}
