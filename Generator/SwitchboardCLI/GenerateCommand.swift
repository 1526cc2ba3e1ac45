import Foundation
import SwitchboardEmitter
import SwitchboardSchema

/// `switchboard generate`: writes Swift for a schema, or checks that it is up to date.
package enum GenerateCommand {
    package static func run(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> Int32 {
        try arguments.rejectUnknown(allowed: ["--output", "--module", "--access", "--layout"])
        guard let outputPath = arguments.options["--output"] else {
            throw CommandLineTool.UsageError("generate needs --output <dir>")
        }
        let access = arguments.options["--access"] ?? "public"
        guard ["public", "package", "internal"].contains(access) else {
            throw CommandLineTool.UsageError("--access must be public, package or internal")
        }
        let layoutName = arguments.options["--layout"] ?? SwiftEmitterOptions.Layout.perType.rawValue
        guard let layout = SwiftEmitterOptions.Layout(rawValue: layoutName) else {
            throw CommandLineTool.UsageError("--layout must be per-type or per-schema-file")
        }
        let outputDirectory = URL(fileURLWithPath: outputPath)
        // `--module` is accepted for scripts that pass it: generated code never names its module.
        // `--well-known-types` generates the runtime's own google.protobuf types instead.
        let schema: Schema
        if arguments.flags.contains("--well-known-types") {
            guard arguments.positional.isEmpty else { throw CommandLineTool.UsageError("--well-known-types takes no schema directory") }
            schema = WellKnownTypes.schema
        } else {
            guard let compiled = try CommandLineTool.compileSchema(arguments) else { return 1 }
            schema = compiled
        }

        let files = SwiftEmitter.generate(schema, options: SwiftEmitterOptions(accessLevel: access, layout: layout))
        // Two schema files can flatten to one name (`a_b.sb` and `a/b.sb`); never let one overwrite the other.
        var seen: [String: Int] = [:]
        for (index, file) in files.enumerated() {
            if let first = seen.updateValue(index, forKey: file.path) {
                CommandLineTool.printError("switchboard: error: two outputs are named \(file.path) (from \(files[first].sourcePath) and \(file.sourcePath)); rename one")
                return 1
            }
        }
        let plan = OutputPlan(directory: outputDirectory, files: files)
        if arguments.flags.contains("--check") {
            let problems = plan.problems()
            if problems.isEmpty {
                print("switchboard: \(files.count) generated files in \(outputPath) are up to date")
                return 0
            }
            for problem in problems { print(problem) }
            CommandLineTool.printError("switchboard: generated code in \(outputPath) is stale; run `switchboard generate`")
            return 1
        }
        do {
            let changed = try plan.apply()
            print("switchboard: wrote \(changed) of \(files.count) files to \(outputPath)")
            return 0
        } catch {
            CommandLineTool.printError("switchboard: error: cannot write \(outputPath): \(error)")
            return 1
        }
    }
}

/// Compares generated files with a directory's contents and brings it up to date.
struct OutputPlan {
    let directory: URL
    let files: [GeneratedFile]

    /// Files in the directory that `generate` wrote earlier (they start with its header).
    func existingGeneratedFiles() -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return names.filter { name in
            guard name.hasSuffix(".swift"), let handle = FileHandle(forReadingAtPath: directory.appendingPathComponent(name).path) else {
                return false
            }
            defer { try? handle.close() }
            let head = handle.readData(ofLength: SwiftEmitter.headerMarker.utf8.count)
            return head == Data(SwiftEmitter.headerMarker.utf8)
        }.sorted()
    }

    /// One line per file that differs: `stale:`, `missing:` or `extra:`.
    func problems() -> [String] {
        var problems: [String] = []
        for file in files {
            let url = directory.appendingPathComponent(file.path)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                problems.append("missing: \(url.relativePath)")
                continue
            }
            if data != Data(file.contents.utf8) { problems.append("stale: \(url.relativePath)") }
        }
        let expected = Set(files.map(\.path))
        for name in existingGeneratedFiles() where !expected.contains(name) {
            problems.append("extra: \(directory.appendingPathComponent(name).relativePath)")
        }
        return problems
    }

    /// Writes changed files and removes generated files the schema no longer produces.
    /// Unchanged files are left untouched so incremental builds stay incremental.
    func apply() throws -> Int {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var changed = 0
        for file in files {
            let url = directory.appendingPathComponent(file.path)
            let data = Data(file.contents.utf8)
            if FileManager.default.contents(atPath: url.path) != data {
                try data.write(to: url, options: .atomic)
                changed += 1
            }
        }
        let expected = Set(files.map(\.path))
        for name in existingGeneratedFiles() where !expected.contains(name) {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            changed += 1
        }
        return changed
    }
}

/// `switchboard export-proto`: writes the proto3 equivalent of a schema.
package enum ExportProtoCommand {
    package static func run(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> Int32 {
        try arguments.rejectUnknown(allowed: ["--output"])
        guard let schema = try CommandLineTool.compileSchema(arguments) else { return 1 }
        let text = ProtoExporter.export(schema)
        guard let output = arguments.options["--output"] else {
            print(text, terminator: "")
            return 0
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
            return 0
        } catch {
            CommandLineTool.printError("switchboard: error: cannot write \(output): \(error)")
            return 1
        }
    }
}

/// `switchboard lint`: checks a schema and prints its diagnostics.
package enum LintCommand {
    package static func run(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> Int32 {
        try arguments.rejectUnknown(allowed: [])
        return try CommandLineTool.compileSchema(arguments) == nil ? 1 : 0
    }
}
