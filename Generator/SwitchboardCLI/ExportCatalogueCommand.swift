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
        // Names snake_cased alike (`getURL` and `getUrl`), or alike but for case, are one file:
        // never let one overwrite the other.
        var seen: [String: String] = [:]
        for file in files {
            if let first = seen.updateValue(file.path, forKey: file.path.lowercased()) {
                CommandLineTool.printError("switchboard: error: two catalogue files are named \(first == file.path ? first : "\(first) and \(file.path)"); rename an rpc, event or error")
                return 1
            }
        }
        let extra = extraCatalogueFiles(in: root, expected: Set(files.map(\.path)))
        if arguments.flags.contains("--check") {
            var problems: [String] = []
            for file in files {
                switch try? String(contentsOf: root.appendingPathComponent(file.path), encoding: .utf8) {
                case file.contents?: break
                case nil: problems.append("missing: \(output)/\(file.path)")
                case .some: problems.append("stale: \(output)/\(file.path)")
                }
            }
            problems += extra.map { "extra: \(output)/\($0)" }
            for problem in problems { CommandLineTool.printError(problem) }
            return problems.isEmpty ? 0 : 1
        }
        do {
            // The index last: a reader that sees the new index finds every definition it names.
            for file in files.filter({ $0.path != "services.yml" }) + files.filter({ $0.path == "services.yml" }) {
                let url = root.appendingPathComponent(file.path)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Data(file.contents.utf8).write(to: url, options: .atomic)
            }
            // What an earlier export wrote for services, rpcs or events the schema no longer has.
            for path in extra { try FileManager.default.removeItem(at: root.appendingPathComponent(path)) }
        } catch {
            CommandLineTool.printError("switchboard: error: cannot write the catalogue to \(output): \(error)")
            return 1
        }
        print("switchboard: wrote \(files.count) catalogue files to \(output)")
        return 0
    }

    /// Catalogue files the export does not produce, sorted: `services.yml` at the top and
    /// `definition.yml` or `*.jtd.json` in a service's folder, one level down (where the export
    /// writes them). Deeper folders hold the live requests and their archives, which can be
    /// large and are the provider's and consumers', so they are not looked into; other files
    /// are the provider's and are left alone.
    static func extraCatalogueFiles(in root: URL, expected: Set<String>) -> [String] {
        let files = FileManager.default
        var extra: [String] = []
        for name in (try? files.contentsOfDirectory(atPath: root.path)) ?? [] where !name.hasPrefix(".") {
            var isFolder: ObjCBool = false
            let url = root.appendingPathComponent(name)
            let isLink = (try? files.destinationOfSymbolicLink(atPath: url.path)) != nil
            if !isLink, files.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue {
                for inner in (try? files.contentsOfDirectory(atPath: url.path)) ?? []
                where inner == "definition.yml" || inner.hasSuffix(".jtd.json") {
                    let path = name + "/" + inner
                    if !expected.contains(path) { extra.append(path) }
                }
            } else if name == "services.yml", !expected.contains(name) {
                extra.append(name)
            }
        }
        return extra.sorted()
    }
}
