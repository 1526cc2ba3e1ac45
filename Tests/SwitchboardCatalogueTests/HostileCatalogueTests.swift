import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardCatalogue
import SwitchboardRuntime
import Testing

/// What a hostile or careless writer of a catalogue folder can put there: links out of it,
/// files that are not files, names that cannot be claimed, broken documents and catalogues
/// that would make a reader take in far more than their size.
@Suite(.timeLimit(.minutes(3))) struct HostileCatalogueTests {
    static let patient = CallOptions(timeout: .seconds(300))

    static func setup() throws -> FileDropTests.Setup { try FileDropTests.Setup() }

    /// The endpoint folder of `lookUpUsernameHash`.
    static func usernamesFolder(_ setup: FileDropTests.Setup) -> URL {
        setup.exported.directory.appendingPathComponent("usernames").appendingPathComponent("look_up_username_hash")
    }

    @Test func aLinkedSubfolderIsNotServed() async throws {
        let setup = try Self.setup()
        defer { setup.exported.remove() }
        // A folder outside the catalogue with a request in it, linked in as a "consumer".
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("outside-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outside) }
        let planted = outside.appendingPathComponent("20260101T000000000Z_x_00000001.request.json")
        try Data(#"{"id": "20260101T000000000Z_x_00000001", "spec": "x", "rpc": "signal.chat.Usernames/LookUpUsernameHash", "verb": "GET", "path": "/v1/accounts/username_hash/AQ", "headers": []}"#.utf8).write(to: planted)
        let folder = Self.usernamesFolder(setup)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: folder.appendingPathComponent("evil"), withDestinationURL: outside)
        #expect(setup.provider.folders().allSatisfy { !$0.url.path.hasSuffix("/evil") })
        #expect(await setup.provider.servePending() == 0)
        // Untouched: not claimed, not answered.
        #expect(FileManager.default.fileExists(atPath: planted.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == [planted.lastPathComponent])
        #expect(setup.handlers.served.current.isEmpty)
    }

    @Test func aRequestNameThatIsNotAFileIsNotCountedAsWork() async throws {
        let setup = try Self.setup()
        defer { setup.exported.remove() }
        let folder = Self.usernamesFolder(setup)
        // A folder under a request's name cannot be claimed (a hard link to it is refused).
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("20260101T000000000Z_x_00000001.request.json"), withIntermediateDirectories: true)
        // The polling loop sleeps only when a pass claims nothing: this pass must say so.
        #expect(await setup.provider.servePending() == 0)
        #expect(await setup.provider.servePending() == 0)
    }

    @Test func aDocumentWithAMalformedHeaderIsRefusedNotStrippedOfIt() async throws {
        let setup = try Self.setup()
        defer { setup.exported.remove() }
        let folder = Self.usernamesFolder(setup)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let id = "20260101T000000000Z_x_00000003"
        try Data(#"{"id": "\#(id)", "spec": "x", "rpc": "signal.chat.Usernames/LookUpUsernameHash", "verb": "GET", "path": "/v1/accounts/username_hash/AQ", "headers": [["Accept", "application/json"], ["Content-Type", 1]]}"#.utf8)
            .write(to: folder.appendingPathComponent(id + ".request.json"))
        let versionAsText = "20260101T000000001Z_x_00000004"
        try Data(#"{"id": "\#(versionAsText)", "spec": "x", "rpc": "signal.chat.Usernames/LookUpUsernameHash", "version": "9", "verb": "GET", "path": "/v1/accounts/username_hash/AQ", "headers": []}"#.utf8)
            .write(to: folder.appendingPathComponent(versionAsText + ".request.json"))
        #expect(await setup.provider.servePending() == 2)
        for answered in [id, versionAsText] {
            let response = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent(answered + ".response.json"))) as? [String: Any]
            #expect(response?["status"] as? Int == 400, "\(answered)")
        }
        #expect(setup.handlers.served.current.isEmpty)
    }

    @Test func aSlowHandlerHoldsItsOwnSlotNotTheIntake() async throws {
        let setup = try Self.setup()
        defer { setup.exported.remove() }
        setup.handlers.held.withLock { _ = $0.insert(Data([0xEE])) }
        try setup.provider.start()
        let transport = setup.transport(Unauthenticated.self)
        let slow = Task { await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([0xEE])), options: Self.patient) }
        // The slow request is in hand (claimed) before the next one arrives.
        _ = await eventually(within: .seconds(60)) { transport.records().contains(where: { $0.state == .claimed }) }
        #expect(transport.records().contains { $0.state == .claimed }, "the slow request is in hand")
        let quick = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([2])), options: CallOptions(timeout: .seconds(20)))
        #expect(quick.value?.uuid == "aci-2", "\(quick)")
        #expect(setup.handlers.served.current == [Data([2])], "answered while the slow one still runs")
        setup.handlers.held.withLock { $0.removeAll() }
        #expect(await slow.value.value?.uuid == "aci-238")
        await setup.provider.stop()
    }

    @Test func theServedMarkerFollowsAnAnswerTheConsumerArchivedFirst() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("marks-\(UUID().uuidString)")
        let archive = folder.appendingPathComponent(".archive")
        try FileManager.default.createDirectory(at: archive, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Answered and archived by the consumer before the provider marked it served.
        try Data("{}".utf8).write(to: folder.appendingPathComponent("a.claimed.json"))
        try Data("{}".utf8).write(to: archive.appendingPathComponent("a.response.json"))
        // Answered, still next to its request.
        try Data("{}".utf8).write(to: folder.appendingPathComponent("b.claimed.json"))
        try Data("{}".utf8).write(to: folder.appendingPathComponent("b.response.json"))
        FileDropProvider.markServed("a", in: folder, durable: false)
        FileDropProvider.markServed("b", in: folder, durable: false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [".archive", "b.response.json", "b.served.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: archive.path).sorted() == ["a.response.json", "a.served.json"])
    }

    @Test func aConsumerNameMustBeOnePlainFolder() async throws {
        let setup = try Self.setup()
        defer { setup.exported.remove() }
        // A name ending in `.json` is taken for a document, never scanned as a folder: its
        // calls would wait out their deadlines (`x.request.json` would even be claimed).
        let long = String(repeating: "a", count: 256), wide = String(repeating: "é", count: 128)
        for name in ["../../escaped", "a/b", ".hidden", "", ".archive", "app.json", "x.request.json", long, wide] {
            let transport = setup.transport(Unauthenticated.self, consumer: name)
            #expect(transport.folder(for: Usernames.lookUpUsernameHash.rpcName) == nil)
            // A name taken would make the call below wait out its (long) deadline.
            guard !FileDropTransport<Unauthenticated>.isValidConsumerName(name) else {
                Issue.record("'\(name)' must be refused")
                continue
            }
            let result = await UsernamesClient(transport: transport).lookUpUsernameHash(LookUpUsernameHashRequest(hash: Data([1])), options: Self.patient)
            guard case .invalidRequest? = result.transportError else {
                Issue.record("'\(name)': expected an invalid request, got \(result)")
                continue
            }
        }
        #expect(!FileManager.default.fileExists(atPath: setup.exported.directory.deletingLastPathComponent().appendingPathComponent("escaped").path))
        #expect(FileDropTransport<Unauthenticated>.isValidConsumerName("chat.example.app"))
        #expect(FileDropTransport<Unauthenticated>.isValidConsumerName("app.json.d"))
        #expect(FileDropTransport<Unauthenticated>.isValidConsumerName(String(repeating: "a", count: 255)))
    }

    @Test func catalogueFilesMustBeRegularFilesWithinTheLimits() throws {
        let exported = try ExportedCatalogue()
        defer { exported.remove() }
        let definition = exported.directory.appendingPathComponent("usernames/definition.yml")
        // A link to a regular file is read; a link to a device is refused, not read forever.
        let copy = exported.directory.appendingPathComponent("usernames-definition.yml")
        try FileManager.default.moveItem(at: definition, to: copy)
        try FileManager.default.createSymbolicLink(at: definition, withDestinationURL: copy)
        #expect(try ServiceCatalogue(directory: exported.directory).service("signal.chat.Usernames") != nil)
        try FileManager.default.removeItem(at: definition)
        try FileManager.default.createSymbolicLink(at: definition, withDestinationURL: URL(fileURLWithPath: "/dev/zero"))
        #expect(throws: CatalogueError.self) { try ServiceCatalogue(directory: exported.directory) }
        // A FIFO would block an open for reading without O_NONBLOCK.
        try FileManager.default.removeItem(at: definition)
        #expect(mkfifo(definition.path, 0o644) == 0)
        #expect(throws: CatalogueError.self) { try ServiceCatalogue(directory: exported.directory) }
        try FileManager.default.removeItem(at: definition)
        try FileManager.default.moveItem(at: copy, to: definition)
        // All files together stay within the total: here, less than the index and one definition.
        var limits = CatalogueYAML.Limits()
        limits.maximumTotalBytes = 600
        #expect(throws: CatalogueError.self) { try ServiceCatalogue(directory: exported.directory, limits: limits) }
        #expect(try ServiceCatalogue(directory: exported.directory).services.count > 1)
    }

    @Test func aServiceOrFolderListedTwiceIsRefused() throws {
        let exported = try ExportedCatalogue()
        defer { exported.remove() }
        let index = try String(contentsOf: exported.directory.appendingPathComponent("services.yml"), encoding: .utf8)
        // The usernames entry, repeated: every copy would read the same definition again.
        let lines = index.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.contains("spec: signal.chat.Usernames") })
        var end = start + 1
        while end < lines.count, lines[end].hasPrefix("    ") { end += 1 }
        let entry = lines[start..<end].joined(separator: "\n")
        try exported.editIndex { $0.replacingOccurrences(of: entry, with: entry + "\n" + entry) }
        do {
            _ = try ServiceCatalogue(directory: exported.directory)
            Issue.record("a service listed twice must not load")
        } catch {
            #expect(error.description.contains("twice"), "\(error)")
        }
    }
}
