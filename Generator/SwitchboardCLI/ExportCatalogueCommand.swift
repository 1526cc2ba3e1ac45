import Foundation
import SwitchboardEmitter
import SwitchboardSchema

/// `switchboard export-catalogue`: writes a schema as a published service catalogue.
package enum ExportCatalogueCommand {
    package static func run(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> Int32 {
        try arguments.rejectUnknown(allowed: ["--output"], flags: ["--check"])
        guard let output = arguments.options["--output"] else { throw .init("export-catalogue needs --output <dir>") }
        guard let schema = try CommandLineTool.compileSchema(arguments) else { return 1 }
        let root = URL(fileURLWithPath: output)
        let files = CatalogueExporter.export(schema)
        if arguments.flags.contains("--check") {
            var stale: [String] = []
            for file in files where (try? String(contentsOf: root.appendingPathComponent(file.path), encoding: .utf8)) != file.contents {
                stale.append(file.path)
            }
            for path in stale { CommandLineTool.printError("stale: \(output)/\(path)") }
            return stale.isEmpty ? 0 : 1
        }
        do {
            for file in files {
                let url = root.appendingPathComponent(file.path)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(file.contents.utf8).write(to: url, options: .atomic)
            }
        } catch {
            CommandLineTool.printError("switchboard: error: cannot write the catalogue to \(output): \(error)")
            return 1
        }
        print("switchboard: wrote \(files.count) catalogue files to \(output)")
        return 0
    }
}
