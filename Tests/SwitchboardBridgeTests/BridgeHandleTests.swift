import Foundation
import SignalChat
import SwitchboardBridge
import SwitchboardChat
import SwitchboardRuntime
import Testing

/// The C functions' handles and strings, used the way a careless or hostile host would.
@Suite(.timeLimit(.minutes(3))) struct BridgeHandleTests {
    /// Runs `body` on a thread of its own, as a host calls the C functions: they block their
    /// thread, which must not be one of Swift concurrency's few.
    func onHostThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }

    static func document(_ pointer: UnsafeMutablePointer<CChar>?) -> [String: Any] {
        defer { switchboard_free_string(pointer) }
        return object(pointer.map { String(cString: $0) })
    }

    static func open(_ server: ChatServer) throws -> OpaquePointer {
        let configuration = "{\"schema\": \"\(SampleSchema.directory.path)\", \"url\": \"\(server.url.absoluteString)\"}"
        var error: UnsafeMutablePointer<CChar>?
        let handle = switchboard_open(configuration, &error)
        defer { switchboard_free_string(error) }
        return try #require(handle, "\(error.map { String(cString: $0) } ?? "")")
    }

    @Test func aHandleClosedTwiceOrUsedAfterCloseAnswersClosed() async throws {
        let server = try ChatServer(routes: Usernames.routes(BridgeBackend()))
        defer { server.stop() }
        let outcome: [String] = await onHostThread {
            guard let handle = try? Self.open(server) else { return ["open failed"] }
            let hash = PathEncoding.base64URL(BridgeBackend.knownHash)
            var seen: [String] = []
            seen.append(Self.document(switchboard_send_command(handle, "GET /v1/accounts/username_hash/\(hash)"))["type"] as? String ?? "?")
            switchboard_close(handle)
            // Before, the handle was the object's address: this was a use after free.
            switchboard_close(handle)
            let after = Self.document(switchboard_send_command(handle, "GET /v1/accounts/username_hash/\(hash)"))
            seen.append((after["type"] as? String ?? "?") + ("\(after)".contains("closed") ? " closed" : ""))
            seen.append(Self.document(switchboard_receive_message(handle, 0))["type"] as? String ?? "?")
            return seen
        }
        #expect(outcome == ["success", "error closed", "closed"])
    }

    @Test func theLibraryNamesItsVersionAndABI() {
        let version = String(cString: switchboard_version())
        #expect(version == StringBridge.version)
        #expect(version.hasSuffix("(abi 1)"), "the header's SWITCHBOARD_ABI_VERSION")
        #expect(switchboard_version() == switchboard_version(), "one static string")
    }

    @Test func callsFromASwiftTaskAreRefusedNotDeadlocked() async throws {
        let server = try ChatServer(routes: Usernames.routes(BridgeBackend()))
        defer { server.stop() }
        let opened = await onHostThread { () -> Int? in (try? Self.open(server)).map { Int(bitPattern: $0) } }
        let handle = try #require(opened.flatMap { OpaquePointer(bitPattern: $0) })
        // Here, on one of Swift concurrency's threads: before, this blocked it for good.
        let answer = Self.document(switchboard_send_command(handle, "GET /v1/accounts/username_hash/AQ"))
        #expect("\(answer)".contains("called from a Swift task"), "\(answer)")
        // Receiving too: its wait held a pool thread that the events it waited for needed.
        let received = Self.document(switchboard_receive_message(handle, -1))
        #expect("\(received)".contains("called from a Swift task"), "\(received)")
        var error: UnsafeMutablePointer<CChar>?
        #expect(switchboard_open("{}", &error) == nil)
        #expect(error.map { String(cString: $0) }?.contains("called from a Swift task") == true)
        switchboard_free_string(error)
        switchboard_close(handle)
        #expect(Self.document(switchboard_send_command(handle, "GET /v1/accounts/username_hash/AQ"))["type"] as? String == "error")
    }

    @Test func aClosedBridgeIsFreedWithItsConnections() async throws {
        let server = try ChatServer(routes: Usernames.routes(BridgeBackend()))
        defer { server.stop() }
        let configuration = try BridgeConfiguration(json: Data("{\"schema\": \"\(SampleSchema.directory.path)\", \"url\": \"\(server.url.absoluteString)\"}".utf8))
        weak var released: StringBridge?
        do {
            let bridge = try await StringBridge.open(configuration)
            released = bridge
            let hash = PathEncoding.base64URL(BridgeBackend.knownHash)
            #expect(object(await bridge.send(verb: "GET", path: "/v1/accounts/username_hash/\(hash)"))["type"] as? String == "success")
            await bridge.close()
        }
        // Before, the connection's push handler kept the bridge (and so the connection) alive:
        // every open and close leaked both.
        let deadline = ContinuousClock.now + .seconds(10)
        while released != nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(released == nil)
    }

    /// A configuration that is not UTF-8 is a `badConfiguration` error (it was `badCommand`,
    /// which no open documents), and a command at both limits at once passes the C layer's
    /// read: the blank line between its head and body counts against neither (from the
    /// bridge review: it was refused as `tooLarge`).
    @Test func openErrorsAreOpensAndACommandAtBothLimitsIsRead() async throws {
        let server = try ChatServer(routes: Usernames.routes(BridgeBackend()))
        defer { server.stop() }
        let url = server.url.absoluteString
        let outcome: [String] = await onHostThread {
            var answers: [String] = []
            var error: UnsafeMutablePointer<CChar>?
            let bytes: [CChar] = Array("{\"schema\": \"".utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0]
            _ = bytes.withUnsafeBufferPointer { switchboard_open($0.baseAddress, &error) }
            answers.append(Self.document(error)["error"] as? String ?? "?")
            let configuration = "{\"schema\": \"\(SampleSchema.directory.path)\", \"url\": \"\(url)\", \"maxRequestHeadBytes\": 1024, \"maxRequestBytes\": 100}"
            guard let handle = switchboard_open(configuration, &error) else { return answers + ["open failed"] }
            defer { switchboard_close(handle) }
            // A head of exactly 1,024 bytes (its last line's CRLF counted in it), the blank
            // line's CRLF, and a body of exactly 100.
            let start = "POST /v1/chats/c9/messages\r\nX-Pad: "
            let head = start + String(repeating: "p", count: 1022 - start.utf8.count)
            let body = "{\"text\":\"" + String(repeating: "x", count: 89) + "\"}"
            answers.append("\(Self.document(switchboard_send_command(handle, head + "\r\n\r\n" + body)))")
            return answers
        }
        #expect(outcome.first == "badConfiguration")
        #expect(outcome.count == 2)
        #expect(!(outcome.last ?? "").contains("tooLarge"), Comment(rawValue: outcome.last ?? ""))
    }

    @Test func stringsPastTheLimitsOrNotUTF8AreRefusedUnread() async throws {
        let server = try ChatServer(routes: Usernames.routes(BridgeBackend()))
        defer { server.stop() }
        let answers: [String] = await onHostThread {
            guard let handle = try? Self.open(server) else { return ["open failed"] }
            defer { switchboard_close(handle) }
            var answers: [String] = []
            // 3 MiB of path: refused without being copied whole.
            answers.append("\(Self.document(switchboard_send_command(handle, "GET /v1/" + String(repeating: "a", count: 3 << 20))))")
            answers.append("\(Self.document(switchboard_send_request(handle, "GET", "/v1/" + String(repeating: "b", count: 100 << 10), nil, nil)))")
            // Before, bad bytes became U+FFFD and the altered request was sent.
            let bytes: [CChar] = Array("GET /v1/accounts/username_hash/A".utf8CString.dropLast()) + [CChar(bitPattern: 0xFF), 0]
            answers.append(bytes.withUnsafeBufferPointer { "\(Self.document(switchboard_send_command(handle, $0.baseAddress)))" })
            // Too many header lines.
            let headers = (0..<200).map { "X-H\($0): v" }.joined(separator: "\n")
            answers.append("\(Self.document(switchboard_send_command(handle, "GET /v1/accounts/username_hash/AQ\n\(headers)\n\n")))")
            // A header name no transport can carry: refused, not dropped on the way.
            answers.append("\(Self.document(switchboard_send_command(handle, "GET /v1/accounts/username_hash/AQ\nBad Name(): v\n\n")))")
            return answers
        }
        try #require(answers.count == 5, "\(answers)")
        #expect(answers[4].contains("not a valid header name"), "\(answers[4].prefix(300))")
        #expect(answers[0].contains("tooLarge"), "\(answers[0].prefix(300))")
        #expect(answers[1].contains("tooLarge"), "\(answers[1].prefix(300))")
        #expect(answers[2].contains("not UTF-8"), "\(answers[2].prefix(300))")
        #expect(answers[3].contains("header lines"), "\(answers[3].prefix(300))")
    }
}

/// A configuration's URL is refused when its port would be cut or dropped (70000 is port 4464;
/// a port too long to parse would fall back to the default port) or its host is missing, as
/// the CLI refuses it.
@Suite struct BridgeURLTests {
    @Test(arguments: ["ws://127.0.0.1:70000/v1/websocket/", "ws://127.0.0.1:99999999999999999999/", "ws://127.0.0.1:/x", "ws://[::1/x"])
    func aURLWithABadAuthorityIsRefused(url: String) {
        let json = Data("{\"schema\": \"\(SampleSchema.directory.path)\", \"url\": \"\(url)\"}".utf8)
        do throws(BridgeError) {
            _ = try BridgeConfiguration(json: json)
            Issue.record("\(url) must be refused")
        } catch {
            #expect(error.code == .badConfiguration)
            #expect(error.message.hasPrefix("'url'"), "\(error.message)")
        }
    }
}
