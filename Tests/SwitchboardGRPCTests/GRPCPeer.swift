import Foundation
import PeerSupport
import SwitchboardGRPC
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// Python's grpcio serving the sample schema from the `.proto` that `export-proto` writes.
final class GRPCPeer: @unchecked Sendable {
    let peer: PythonPeer
    let port: Int
    let events: URL
    let directory: URL

    /// How the peer is reached: in the clear (h2c) or over TLS with the test CA.
    enum Security: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case h2c, tls
        var testDescription: String { rawValue }

        /// Server options for this security: TLS with the test certificate for `localhost`.
        func serverOptions() async throws -> GRPCServerOptions {
            var options = GRPCServerOptions()
            if self == .tls {
                options.tls = try TLSServerContext(certificateChainPath: await TestCertificates.file("good.pem"),
                                                   privateKeyPath: await TestCertificates.file("good.key"))
            }
            return options
        }
    }

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The sample schema as a `.proto`, made as `switchboard export-proto schema` makes it.
    static func exportedProto() throws -> String {
        let output = SchemaCompiler.compile(directory: repositoryRoot.appendingPathComponent("schema"))
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        return ProtoExporter.export(schema)
    }

    /// One peer per security mode for the whole run: each start compiles the `.proto`, which
    /// on two cores is load enough to slow every other test. Tests tell their calls apart by
    /// their metadata and sizes.
    static let h2c = Task<GRPCPeer, Error> { try await GRPCPeer(starting: .h2c) }
    static let tls = Task<GRPCPeer, Error> { try await GRPCPeer(starting: .tls) }
    /// A peer whose every method reads and writes protobuf JSON (`application/grpc+json` clients).
    static let json = Task<GRPCPeer, Error> { try await GRPCPeer(starting: .h2c, json: true) }

    /// A peer that lets one call run at a time (SETTINGS_MAX_CONCURRENT_STREAMS 1).
    static let oneStream = Task<GRPCPeer, Error> { try await GRPCPeer(starting: .h2c, maxStreams: 1) }

    /// The shared peer for `security`.
    static func shared(_ security: Security) async throws -> GRPCPeer {
        try await (security == .h2c ? h2c : tls).value
    }

    private init(starting security: Security, json: Bool = false, maxStreams: Int? = nil) async throws {
        directory = try ScratchDirectory.make("grpc-peer")
        let proto = directory.appendingPathComponent("signal_chat.proto")
        try Self.exportedProto().write(to: proto, atomically: true, encoding: .utf8)
        events = directory.appendingPathComponent("events.jsonl")
        var arguments = [proto.path, events.path]
        if security == .tls {
            arguments += ["--tls", await TestCertificates.file("good.pem"), await TestCertificates.file("good.key")]
        }
        if json { arguments.append("--json") }
        if let maxStreams { arguments += ["--max-streams", "\(maxStreams)"] }
        peer = try PythonPeer(script: "grpc_peer.py", arguments: arguments)
        guard let line = await peer.firstLineAsync(timeout: 60), let port = Int(line) else {
            let output = await peer.stopAsync()
            throw PeerFailure(description: "grpc_peer.py did not start: \(output)")
        }
        self.port = port
    }

    struct PeerFailure: Error, CustomStringConvertible {
        let description: String
    }

    struct Event: Decodable {
        var method: String
        var metadata: [String: String]
        var remaining: Double?
        var size: Int
        var cancelled: Bool
        /// Logged as a `wait` call starts, before its finishing event.
        var started: Bool?
        /// The request as grpcio re-serialized it, hex-encoded; only for requests up to 64 KiB.
        var request: String?

        /// ``request`` as bytes; nil when the event has none (or its hex is malformed).
        var requestBytes: [UInt8]? {
            guard let request, request.utf8.count % 2 == 0 else { return nil }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(request.utf8.count / 2)
            var index = request.startIndex
            while index < request.endIndex {
                let next = request.index(index, offsetBy: 2)
                guard let byte = UInt8(request[index..<next], radix: 16) else { return nil }
                bytes.append(byte)
                index = next
            }
            return bytes
        }
    }

    /// What the server logged so far: one event per finished call, and one as a `wait` or `hold:` call starts.
    func loggedEvents() -> [Event] {
        guard let text = try? String(contentsOf: events, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Event.self, from: Data($0.utf8)) }
    }

    /// Waits (30 s at most) for an event that matches.
    func event(where matches: (Event) -> Bool) async -> Event? {
        // 30 s on the wall clock: a loaded machine can keep the Python process waiting long.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let found = loggedEvents().first(where: matches) { return found }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return loggedEvents().first(where: matches)
    }

    /// Shared peers outlive every test: they end with the test process, whose exit closes their input.
    func stop() async {}
}

