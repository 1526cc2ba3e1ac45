import Foundation
import PeerSupport
import SignalChat
import SwitchboardChat
import SwitchboardEmitter
import SwitchboardRuntime
import SwitchboardSchema
import SwitchboardWebSocket
import Testing

/// Our client against a chat server nobody here wrote: Python `websockets` plus the
/// `protobuf` package, loading the envelope from a descriptor set that protoc built from
/// `export-proto`. The server checks every frame we send against protobuf's own
/// serialization, so agreement is byte for byte in both directions.
@Suite(.serialized) struct PythonChatServerInteropTests {
    /// What the Python server reports when it stops.
    struct Report: Decodable {
        struct Connection: Decodable { let path: String; let authorization: String?; let userAgent: String? }
        struct Request: Decodable { let verb: String; let path: String; let headers: [String] }
        struct Sent: Decodable { let destination: String; let timestamp: Int64; let contents: [String]; let urgent: Bool }
        let connections: [Connection]
        let requests: [Request]
        let acks: [[AnyCodableScalar]]
        let pushed: [String]
        let mismatches: [String]
        let sent: [Sent]
    }

    /// A JSON scalar inside the acknowledgement triples.
    enum AnyCodableScalar: Decodable, Equatable {
        case number(Int), text(String)
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int.self) { self = .number(number) } else { self = .text(try container.decode(String.self)) }
        }
    }

    /// protoc's descriptor set for the sample schema, made from our `export-proto` output.
    static func descriptorSet() throws -> URL {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let schema = try #require(SchemaCompiler.compile(directory: root.appendingPathComponent("schema")).schema)
        let directory = try ScratchDirectory.make("switchboard-interop")
        try Data(ProtoExporter.export(schema).utf8).write(to: directory.appendingPathComponent("signal_chat.proto"))
        let output = directory.appendingPathComponent("signal_chat.pb")
        let protoc = Process()
        protoc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        protoc.arguments = ["protoc", "-I", directory.path, "-I", "/usr/include", "--include_imports",
                            "--descriptor_set_out=\(output.path)", "signal_chat.proto"]
        try protoc.run()
        protoc.waitUntilExit()
        #expect(protoc.terminationStatus == 0, "protoc must accept the exported schema")
        return output
    }

    final class Inbox: MessagesEventListener, @unchecked Sendable {
        let received = Locked<[String]>([])
        let envelopes = Locked<[Envelope]>([])
        func incomingMessage(_ payload: Envelope, context: EventContext) async throws {
            envelopes.withLock { $0.append(payload) }
            received.withLock { $0.append(payload.serverGuid ?? "?") }
        }
        func queueEmpty(context: EventContext) async throws { received.withLock { $0.append("empty") } }
    }

    @Test func requestsAndPushesInteroperateByteForByte() async throws {
        let peer = try PythonPeer(script: "chat_server.py", arguments: [try Self.descriptorSet().path])
        let port = try #require(await peer.firstLineAsync().flatMap { Int($0) }, "the Python server prints its port")
        let url = URL(string: "ws://127.0.0.1:\(port)/v1/websocket/")!
        let options = ChatConnectionOptions(headers: [HTTPHeaderField(name: "User-Agent", value: "Switchboard-Interop")], keepalive: nil)

        // Unauthenticated: a JSON endpoint with a base64url path.
        let anonymous = try await ChatClient.connectUnauthenticated(to: url, options: options)
        let usernames = UsernamesClient(transport: anonymous)
        #expect(try await usernames.lookUpUsernameHash(hash: Data([1, 2, 3])).uuid == "py-alice")
        guard case .nonSuccess(.notFound) = await usernames.lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([9]))) else {
            Issue.record("the Python server's 404 maps to notFound")
            return
        }
        #expect(anonymous.upgradeHeaders.value(named: "X-Signal-Timestamp") == "1700000000123")

        // Authenticated: a protobuf endpoint, and pipelined pushes handled in order.
        let inbox = Inbox()
        let credentials = ChatClient.Credentials(username: "aci-py", deviceID: 3, password: "pw")
        let account = try await ChatClient.connectAuthenticated(to: url, credentials: credentials, options: options) { request in
            await Messages.dispatch(request, to: inbox)
        }
        let sent = await MessagesClient(transport: account).sendMessage(SendMessageRequest(
            destination: "bob", timestamp: Date(timeIntervalSince1970: 1_700_000_000.5),
            messages: [OutgoingMessage(type: .ciphertext, destinationDeviceId: 1, content: Data([0xAA])),
                       OutgoingMessage(type: .ciphertext, destinationDeviceId: 2, content: Data([0xBB, 0xCC]))],
            urgent: true))
        #expect(sent.value?.needsSync == true)
        for _ in 0..<2000 where inbox.received.current.last != "empty" { try await Task.sleep(for: .milliseconds(25)) }
        #expect(inbox.received.current == ["py-1", "py-2", "py-3", "py-4", "py-5", "empty"])
        await anonymous.close()
        await account.close()

        let lines = await peer.stopAsync().split(separator: "\n")
        let report = try JSONDecoder().decode(Report.self, from: Data(try #require(lines.last).utf8))
        #expect(report.mismatches.isEmpty, "every frame we sent is protobuf's canonical encoding")
        #expect(report.connections.map(\.path) == ["/v1/websocket/", "/v1/websocket/"])
        #expect(report.connections.map(\.authorization) == [nil, "Basic " + Data("aci-py.3:pw".utf8).base64EncodedString()])
        #expect(report.connections.allSatisfy { $0.userAgent == "Switchboard-Interop" })
        #expect(report.acks == (1...6).map { [.number($0), .number(200), .text("OK")] }, "each push acknowledged with its id, 200 and OK")
        // The payloads the app saw re-encode to exactly the bytes Python sent.
        #expect(inbox.envelopes.current.map { $0.serializedData().map { String(format: "%02x", $0) }.joined() } == report.pushed)
        #expect(report.requests.map(\.path) == ["/v1/accounts/username_hash/AQID", "/v1/accounts/username_hash/CQ", "/v1/messages/bob"])
        #expect(report.requests.first?.headers.contains("Accept:application/json") == true)
        #expect(report.sent.first?.timestamp == 1_700_000_000_500)
        #expect(report.sent.first?.contents == ["aa", "bbcc"])
        #expect(report.sent.first?.urgent == true)
    }
}
