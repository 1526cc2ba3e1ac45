import Foundation
import SwitchboardCatalogue
import Testing

/// A catalogue key holding another kind of value than the one expected is an error naming the
/// key: it was ignored, so `status: [disabled]` left a service enabled and `services: none`
/// read as no services.
@Suite struct CatalogueValueKindTests {
    static let indexText = [
        "spec: Services", "versions: 1", "services:",
        "  - spec: p.S", "    versions: 1-2", "    folder: s", "    status: enabled", "    countries: [USA]",
    ].joined(separator: "\n") + "\n"
    static let definitionText = [
        "spec: p.S", "endpoints:", "  - spec: E", "    rpc: p.S/E", "    versions: 2", "    folder: e",
    ].joined(separator: "\n") + "\n"

    /// A catalogue of one service `p.S` in folder `s`, written into a fresh folder.
    static func write(index: String, definition: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kinds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("s"), withIntermediateDirectories: true)
        try Data(index.utf8).write(to: directory.appendingPathComponent("services.yml"))
        try Data(definition.utf8).write(to: directory.appendingPathComponent("s/definition.yml"))
        return directory
    }

    /// Folders that differ only in case are one folder where case is ignored (Apple
    /// platforms' default file systems): two services, or two endpoints, given them are refused
    /// as given the same folder. Found by review.
    @Test func foldersDifferingOnlyInCaseAreOneFolder() throws {
        let services = Self.indexText + "  - spec: p.T\n    folder: S\n"
        let twoServices = try Self.write(index: services, definition: Self.definitionText)
        defer { try? FileManager.default.removeItem(at: twoServices) }
        // Its own definition, in its own folder where case counts (as here on Linux).
        try FileManager.default.createDirectory(at: twoServices.appendingPathComponent("S"), withIntermediateDirectories: true)
        try Data("spec: p.T\nendpoints:\n  - spec: G\n    rpc: p.T/G\n    folder: g\n".utf8)
            .write(to: twoServices.appendingPathComponent("S/definition.yml"))
        do {
            _ = try ServiceCatalogue(directory: twoServices)
            Issue.record("folders s and S were taken for two")
        } catch {
            #expect("\(error)".contains("given to two services"), "\(error)")
        }
        let endpoints = Self.definitionText + "  - spec: F\n    rpc: p.S/F\n    folder: E\n"
        let twoEndpoints = try Self.write(index: Self.indexText, definition: endpoints)
        defer { try? FileManager.default.removeItem(at: twoEndpoints) }
        #expect(throws: CatalogueError.self) { try ServiceCatalogue(directory: twoEndpoints) }
        let distinct = Self.definitionText + "  - spec: F\n    rpc: p.S/F\n    folder: f\n"
        let fine = try Self.write(index: Self.indexText, definition: distinct)
        defer { try? FileManager.default.removeItem(at: fine) }
        #expect(try ServiceCatalogue(directory: fine).service("p.S")?.endpoints.count == 2)
    }

    @Test func theCatalogueAsWrittenReads() throws {
        let directory = try Self.write(index: Self.indexText, definition: Self.definitionText)
        defer { try? FileManager.default.removeItem(at: directory) }
        let service = try #require(try ServiceCatalogue(directory: directory).service("p.S"))
        #expect(service.status == .enabled)
        #expect(service.versions == 1...2)
        #expect(service.countries == .only(["USA"]))
        #expect(service.endpoints.map(\.versions) == [2...2])
        // An empty value is YAML's null: no services, as before.
        let empty = try Self.write(index: "spec: Services\nversions: 1\nservices:\n", definition: Self.definitionText)
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect(try ServiceCatalogue(directory: empty).services.isEmpty)
    }

    @Test(arguments: [
        ("services.yml", "    status: enabled", "    status: [disabled]", "'status' of p.S"),
        ("services.yml", "    status: enabled", "    status:\n      value: disabled", "'status' of p.S"),
        ("services.yml", "    versions: 1-2", "    versions: [2]", "'versions' of p.S"),
        ("services.yml", "versions: 1\n", "versions: [1]\n", "'versions'"),
        ("services.yml", indexText, "spec: Services\nversions: 1\nservices: none\n", "'services'"),
        ("services.yml", "    countries: [USA]", "    countries:\n      - USA\n      - [CHN]", "countries of p.S"),
        ("s/definition.yml", "spec: p.S\n", "spec: [p.S]\n", "'spec'"),
        ("s/definition.yml", "    versions: 2", "    versions: [2]", "'versions' of p.S/E"),
        ("s/definition.yml", definitionText, "spec: p.S\nendpoints: none\n", "'endpoints'"),
        ("s/definition.yml", definitionText, "- spec: p.S\n", "must be a mapping"),
    ]) func aKeyOfTheWrongKindIsAnErrorNamingIt(file: String, original: String, replacement: String, expected: String) throws {
        var index = Self.indexText, definition = Self.definitionText
        if file == "services.yml" {
            #expect(index.contains(original))
            index = index.replacingOccurrences(of: original, with: replacement)
        } else {
            #expect(definition.contains(original))
            definition = definition.replacingOccurrences(of: original, with: replacement)
        }
        let directory = try Self.write(index: index, definition: definition)
        defer { try? FileManager.default.removeItem(at: directory) }
        do {
            let catalogue = try ServiceCatalogue(directory: directory)
            Issue.record("must not load: \(catalogue.services)")
        } catch {
            #expect(error.file == file)
            #expect(error.message.contains(expected), "\(error)")
        }
    }
}
