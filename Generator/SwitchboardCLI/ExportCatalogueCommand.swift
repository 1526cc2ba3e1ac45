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
        // A service folder that is a symbolic link would send the export's files outside the
        // catalogue, as `generate` refuses to (its writes never follow a link).
        let linked = Set(files.compactMap { linkedFolder(of: $0.path, in: root) }).sorted()
        // A provider's own `services.yml` or `definition.yml` where the export writes its own is
        // never overwritten (found by review: it was replaced, and lost). JSON has no comment
        // to mark the type definitions, which live only in folders the export made.
        let handWritten = linked.isEmpty ? files.map(\.path).filter { path in
            guard path.hasSuffix(".yml"), let start = RegularFile.prefix(of: root.appendingPathComponent(path).path, upTo: 1) else { return false }
            return !start.isEmpty && !isGenerated(root.appendingPathComponent(path))
        } : []
        if arguments.flags.contains("--check") {
            var problems: [String] = linked.map { "not a folder (a symbolic link): \(output)/\($0)" }
            problems += handWritten.map { "not generated: \(output)/\($0) has the name of a catalogue file; move or rename it" }
            for file in files where !linked.contains(where: { file.path.hasPrefix($0 + "/") }) && !handWritten.contains(file.path) {
                switch RegularFile.holds(Data(file.contents.utf8), at: root.appendingPathComponent(file.path).path) {
                case true?: break
                case nil: problems.append("missing: \(output)/\(file.path)")
                case false?: problems.append("stale: \(output)/\(file.path)")
                }
            }
            problems += extra.map { "extra: \(output)/\($0)" }
            return CommandLineTool.reportCheck(problems, upToDate: "\(files.count) catalogue files in \(output) are up to date",
                                               stale: "the catalogue in \(output) is stale; run `switchboard export-catalogue`")
        }
        if let first = linked.first {
            CommandLineTool.printError("switchboard: error: \(output)/\(first) is a symbolic link; the catalogue is written into real folders only")
            return 1
        }
        if let first = handWritten.first {
            CommandLineTool.printError("switchboard: error: \(output)/\(first) was not written by switchboard but has the name of a catalogue file; move or rename it")
            return 1
        }
        do {
            // The index last: a reader that sees the new index finds every definition it names.
            for file in files.filter({ $0.path != "services.yml" }) + files.filter({ $0.path == "services.yml" }) {
                let url = root.appendingPathComponent(file.path)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try GeneratedFileWriter.write(Data(file.contents.utf8), to: url.path, atomically: true)
            }
            // What an earlier export wrote for services, rpcs or events the schema no longer has.
            for path in extra { try FileManager.default.removeItem(at: root.appendingPathComponent(path)) }
        } catch {
            CommandLineTool.printError("switchboard: error: cannot write the catalogue to \(output): \(error)")
            return 1
        }
        print("switchboard: wrote \(files.count) catalogue files to \(output)\(extra.isEmpty ? "" : ", removed \(extra.count) stale")")
        return 0
    }

    /// The folder on the way to `path` below `root` that is a symbolic link, if any.
    static func linkedFolder(of path: String, in root: URL) -> String? {
        let folders = path.split(separator: "/").dropLast()
        var prefix = ""
        for folder in folders {
            prefix += prefix.isEmpty ? String(folder) : "/" + folder
            var status = stat()
            if lstat(root.appendingPathComponent(prefix).path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK { return prefix }
        }
        return nil
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
            // Only what an export wrote: a folder whose definition.yml it generated, and its
            // own index. A provider's folder of its own keeps its files, whatever their names.
            if !isLink, files.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue,
               isGenerated(url.appendingPathComponent("definition.yml")) {
                for inner in (try? files.contentsOfDirectory(atPath: url.path)) ?? []
                where inner == "definition.yml" || inner.hasSuffix(".jtd.json") {
                    let path = name + "/" + inner
                    // Only a regular file can be one an export wrote: a folder so named is not
                    // removed, nor is what it holds.
                    guard RegularFile.prefix(of: url.appendingPathComponent(inner).path, upTo: 0) != nil else { continue }
                    if !expected.contains(path) { extra.append(path) }
                }
            } else if name == "services.yml", !expected.contains(name), isGenerated(url) {
                extra.append(name)
            }
        }
        return extra.sorted()
    }

    /// Whether the file at `url` starts with the line an export writes ("... Generated by
    /// switchboard ..."); read no further than its first 1 KiB, and only from a regular file
    /// (anyone who may make folders here could leave a FIFO of that name).
    static func isGenerated(_ url: URL) -> Bool {
        guard let head = RegularFile.prefix(of: url.path, upTo: 1024) else { return false }
        let firstLine = head.prefix { $0 != UInt8(ascii: "\n") }
        return firstLine.first == UInt8(ascii: "#") && String(decoding: firstLine, as: UTF8.self).contains("Generated by switchboard")
    }
}
