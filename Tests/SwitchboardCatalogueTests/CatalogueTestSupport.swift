import Foundation
import SwitchboardCatalogue
import SwitchboardEmitter
import SwitchboardSchema

/// The sample schema's catalogue, exported into a fresh folder.
struct ExportedCatalogue {
    static let schemaDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("schema")
    static let schema: Schema = SchemaCompiler.compile(directory: schemaDirectory).schema!

    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("catalogue-\(UUID().uuidString)")
        for file in CatalogueExporter.export(Self.schema) {
            let url = directory.appendingPathComponent(file.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(file.contents.utf8).write(to: url)
        }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Rewrites `services.yml` with `edit` applied to its text.
    func editIndex(_ edit: (String) -> String) throws {
        let url = directory.appendingPathComponent("services.yml")
        try Data(edit(try String(contentsOf: url, encoding: .utf8)).utf8).write(to: url)
    }
}
