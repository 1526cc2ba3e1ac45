import Foundation
import PeerSupport
import SwitchboardWebSocket
import Testing

/// Our client against a raw server that writes hand-made frames, mirroring the
/// Autobahn|Testsuite client categories 1.x to 7.x. The client echoes like an Autobahn
/// test agent; the server judges what comes back. Every case must end within a deadline.
@Suite(.serialized) struct HostileServerTests {
    @Test func everyCaseBehavesOrFailsWithTheRightCode() async throws {
        let lister = try PythonPeer(script: "ws_hostile_server.py", arguments: ["--list"])
        // Each line: a case and the close codes the client may report for it.
        let listed = await lister.finishAsync(timeout: 20).output.split(separator: "\n").map { $0.split(separator: " ") }.filter { $0.count == 2 }
        let cases = listed.map { String($0[0]) }
        let allowedCodes = Dictionary(uniqueKeysWithValues: listed.map { (String($0[0]), Set($0[1].split(separator: ",").compactMap { UInt16($0) })) })
        // Cases whose upgrade the client must refuse.
        let refused = Set(listed.filter { $0[1] == "refused" }.map { String($0[0]) })
        #expect(cases.count >= 60)
        #expect(refused.count >= 2)

        let server = try PythonPeer(script: "ws_hostile_server.py")
        let port = try #require(await server.firstLineAsync().flatMap(Int.init), "the hostile server did not start")
        var clientSide: [String: String] = [:]
        for name in cases {
            let started = ContinuousClock.now
            if refused.contains(name) {
                do {
                    let connection = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(port)/case/\(name)")!, options: .init(subprotocols: []))
                    connection.abort()
                    Issue.record("\(name): the client accepted an upgrade it must refuse")
                    clientSide[name] = "accepted"
                } catch {
                    guard case .invalidUpgradeResponse = error else {
                        Issue.record("\(name): \(error)")
                        continue
                    }
                    clientSide[name] = "refused"
                }
                continue
            }
            let connection = try await WebSocketClient.connect(to: URL(string: "ws://127.0.0.1:\(port)/case/\(name)")!)
            let echo = Task {
                for await message in connection.messages { try? await connection.send(message) }
                await connection.close()
            }
            let outcome = await withTaskGroup(of: CaseOutcome.self) { group in
                group.addTask { .closed(await connection.waitUntilClosed()) }
                group.addTask {
                    try? await Task.sleep(for: .seconds(30))
                    // Ends the wait above too, so a hung client fails its case, not the run.
                    if !Task.isCancelled { connection.abort() }
                    return .timedOut
                }
                let first = await group.next() ?? .timedOut
                group.cancelAll()
                return first
            }
            echo.cancel()
            // Only a connection that did not end: one that did may still be waiting for the
            // server's end of TCP, which a case judges.
            if case .timedOut = outcome { connection.abort() }
            let elapsed = ContinuousClock.now - started
            var info: WebSocketCloseInfo?
            if case let .closed(closed) = outcome { info = closed }
            let hung = info == nil || elapsed >= .seconds(30)
            #expect(!hung, "\(name): the client neither finished nor failed within the deadline")
            if let info, !hung {
                #expect(allowedCodes[name]?.contains(info.code.rawValue) == true,
                        "\(name): the client reported \(info.code.rawValue), expected one of \(allowedCodes[name] ?? [])")
                // A case that ends in a close handshake (not a failure) ends cleanly.
                if allowedCodes[name]?.isDisjoint(with: [1002, 1007]) == true {
                    #expect(info.wasClean, "\(name): \(info)")
                }
            }
            clientSide[name] = hung ? "hung" : info.map { "\($0.code.rawValue)\($0.wasClean ? "" : " (unclean)")" } ?? "-"
        }
        let verdicts = await server.stopAsync().split(separator: "\n").map(String.init)
        var results: [(String, String, String)] = []
        for name in cases {
            let verdict = verdicts.first { $0.hasSuffix(" \(name)") || $0.contains(" \(name):") } ?? "MISSING \(name)"
            #expect(verdict.hasPrefix("PASS"), "\(verdict)")
            results.append((name, verdict.hasPrefix("PASS") ? "pass" : verdict, clientSide[name] ?? "-"))
        }
        if ProcessInfo.processInfo.environment["SWITCHBOARD_WRITE_CONFORMANCE"] == "1" {
            var table = "# WebSocket conformance: hostile-server cases\n\nWritten by `SWITCHBOARD_WRITE_CONFORMANCE=1 swift test --filter HostileServerTests`.\n"
                + "Each row is one case of `Tests/Peers/ws_hostile_server.py`: the server judges the frames the client sent, "
                + "and the test checks the close code the client reports, and that a close handshake ended cleanly.\n\n"
                + "| Case | Server's verdict | Client's close code |\n|---|---|---|\n"
            for (name, verdict, code) in results { table += "| \(name) | \(verdict) | \(code) |\n" }
            let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("docs/websocket-conformance.md")
            try table.write(to: path, atomically: true, encoding: .utf8)
        }
    }
}

/// How one hostile case ended for the client.
private enum CaseOutcome: Sendable {
    case closed(WebSocketCloseInfo)
    case timedOut
}
