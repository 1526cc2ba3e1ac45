import Foundation
import SwitchboardEmitter
import SwitchboardSchema

/// `switchboard generate`: writes Swift for a schema, or checks that it is up to date.
package enum GenerateCommand {
    package static func run(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> Int32 {
        try arguments.rejectUnknown(allowed: ["--output", "--module", "--access", "--layout"], flags: ["--check", "--well-known-types"])
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
        // Compared without case: on a case-insensitive file system (macOS's default) `Chat.swift`
        // and `chat.swift` are one file.
        var seen: [String: Int] = [:]
        for (index, file) in files.enumerated() {
            if let first = seen.updateValue(index, forKey: file.path.lowercased()) {
                let names = files[first].path == file.path ? file.path : "\(files[first].path) and \(file.path), one file where case is ignored,"
                CommandLineTool.printError("switchboard: error: two outputs are named \(names) (from \(files[first].sourcePath) and \(file.sourcePath)); rename one")
                return 1
            }
        }
        let plan = OutputPlan(directory: outputDirectory, files: files)
        if arguments.flags.contains("--check") {
            return CommandLineTool.reportCheck(plan.problems(), upToDate: "\(files.count) generated files in \(outputPath) are up to date",
                                               stale: "generated code in \(outputPath) is stale; run `switchboard generate`")
        }
        do {
            let outcome = try plan.apply()
            print("switchboard: wrote \(outcome.written) of \(files.count) files to \(outputPath)"
                  + (outcome.removed == 0 ? "" : ", removed \(outcome.removed) stale"))
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

    /// The names in the directory, read once: a file not among them needs no read to compare.
    func existingNames() -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
    }

    /// Files in the directory that `generate` wrote earlier (they start with its header) and
    /// that this plan does not produce.
    func extraGeneratedFiles(among names: Set<String>) -> [String] {
        let expected = Set(files.map(\.path))
        // A type renamed only in case (`Url` to `URL`) is written over its old file where case
        // is ignored: the old name is then the new file, not an extra one to remove.
        let byLowercase = Dictionary(files.map { ($0.path.lowercased(), $0.path) }, uniquingKeysWith: { first, _ in first })
        return names.filter { name in
            if let twin = byLowercase[name.lowercased()], twin != name,
               Self.isSameFile(directory.appendingPathComponent(name).path, directory.appendingPathComponent(twin).path) {
                return false
            }
            let path = directory.appendingPathComponent(name).path
            // Only a regular file can be one this tool wrote: a directory named `*.swift`
            // made the read trap, and a FIFO made it wait for ever.
            guard name.hasSuffix(".swift"), !expected.contains(name) else { return false }
            return RegularFile.prefix(of: path, upTo: SwiftEmitter.headerMarker.utf8.count) == Data(SwiftEmitter.headerMarker.utf8)
        }.sorted()
    }

    /// Whether the file at `path` may be replaced: one this tool wrote (it starts with the
    /// header), or an empty one (a write cut short). Anything else is the user's: a
    /// hand-written file that has the name of a generated one is never overwritten (found by
    /// review: it was replaced, and lost).
    static func mayReplace(_ path: String) -> Bool {
        guard let start = RegularFile.prefix(of: path, upTo: SwiftEmitter.headerMarker.utf8.count) else { return true }
        return start.isEmpty || start == Data(SwiftEmitter.headerMarker.utf8)
    }

    /// The existing entry spelled otherwise that is `name` on this file system (one that
    /// ignores case, as macOS's does): writing `name` would replace it.
    func caseTwin(of name: String, among existing: Set<String>, lowercased: [String: String]) -> String? {
        guard !existing.contains(name), let twin = lowercased[name.lowercased()], twin != name,
              Self.isSameFile(directory.path + "/" + twin, directory.path + "/" + name) else { return nil }
        return twin
    }

    /// Files this plan would write over that it did not generate.
    func handWrittenInTheWay(among existing: Set<String>) -> [String] {
        let lowercased = Dictionary(existing.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        return files.compactMap { file -> String? in
            let name = existing.contains(file.path) ? file.path : caseTwin(of: file.path, among: existing, lowercased: lowercased)
            guard let name, !Self.mayReplace(directory.path + "/" + name) else { return nil }
            return name
        }.sorted()
    }

    /// `.switchboard-<pid>-<n>.tmp` of a process that is gone (another generate still
    /// running into this folder keeps its own).
    static func isAbandonedTemporaryFile(_ name: String) -> Bool {
        guard name.hasPrefix(".switchboard-"), name.hasSuffix(".tmp") else { return false }
        let parts = name.dropFirst(".switchboard-".count).split(separator: "-")
        guard parts.count == 2, let pid = pid_t(parts[0]) else { return false }
        return pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Whether two paths name one file (as two spellings do on a case-insensitive file system).
    static func isSameFile(_ first: String, _ second: String) -> Bool {
        var a = stat(), b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// One line per file that differs: `stale:`, `missing:` or `extra:`.
    func problems() -> [String] {
        var problems: [String] = []
        let existing = existingNames()
        let inTheWay = Set(handWrittenInTheWay(among: existing))
        for name in inTheWay.sorted() {
            problems.append("not generated: \(directory.appendingPathComponent(name).relativePath) has the name of a generated file; move or rename it")
        }
        for file in files where !inTheWay.contains(file.path) {
            let url = directory.appendingPathComponent(file.path)
            guard existing.contains(file.path), let same = RegularFile.holds(Data(file.contents.utf8), at: url.path) else {
                problems.append("missing: \(url.relativePath)")
                continue
            }
            if !same { problems.append("stale: \(url.relativePath)") }
        }
        for name in extraGeneratedFiles(among: existing) {
            problems.append("extra: \(directory.appendingPathComponent(name).relativePath)")
        }
        return problems
    }

    /// Writes changed files and removes generated files the schema no longer produces.
    /// Unchanged files are left untouched so incremental builds stay incremental.
    func apply() throws -> (written: Int, removed: Int) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let existing = existingNames()
        let inTheWay = handWrittenInTheWay(among: existing)
        guard inTheWay.isEmpty else { throw HandWrittenFiles(paths: inTheWay.map { directory.appendingPathComponent($0).path }) }
        // Files are independent: compared and written on every core. A file that exists is
        // replaced atomically (a build reading it never sees half of it); a new one is written
        // in place, which saves a temporary file and a rename per file.
        let outcomes = Outcomes(count: files.count)
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            // A plain path: `URL.appendingPathComponent` stats the file to learn if it is a folder.
            let path = directory.path + "/" + files[index].path
            let data = Data(files[index].contents.utf8)
            let outcome: Result<Bool, any Error>
            switch existing.contains(files[index].path) ? RegularFile.holds(data, at: path) : nil {
            case true?: outcome = .success(false)
            case false?: outcome = Result { try GeneratedFileWriter.write(data, to: path, atomically: true); return true }
            case nil: outcome = Result { try GeneratedFileWriter.write(data, to: path, atomically: false); return true }
            }
            outcomes.set(index, outcome)
        }
        var written = 0
        for outcome in outcomes.all where try outcome.get() { written += 1 }
        var removed = 0
        for name in extraGeneratedFiles(among: existing) {
            try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            removed += 1
        }
        // Temporary files a generate that died (crashed, killed) left behind.
        for name in existing where Self.isAbandonedTemporaryFile(name) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        return (written, removed)
    }
}

/// Files in the output folder with the names of generated ones that the tool did not write:
/// nothing is written until they are moved.
struct HandWrittenFiles: Error, CustomStringConvertible {
    let paths: [String]
    var description: String {
        paths.map { "\($0) was not written by switchboard but has the name of a generated file; move or rename it" }.joined(separator: "\n")
    }
}

/// Writes generated files with plain system calls. Foundation's `Data.write` syncs every file
/// to disk, which made writing a thousand files take a second; generated code can be written
/// again, so a crash losing the last files is harmless (the next `generate` sees them stale).
enum GeneratedFileWriter {
    struct Failure: Error, CustomStringConvertible {
        let path: String
        let code: Int32
        var description: String { "\(path): \(String(cString: strerror(code)))" }
    }

    /// Writes `data` to `path`; `atomically` through a temporary file renamed over it, so a
    /// reader sees the old file or the new one, never half of one.
    static func write(_ data: Data, to path: String, atomically: Bool) throws {
        // The temporary file's name does not grow with the target's (a name near the file
        // system's limit could be written once and never replaced), and neither open follows a
        // symlink: a link left in the output folder must not send a file outside it.
        let folder = (path as NSString).deletingLastPathComponent
        let target = atomically ? folder + "/.switchboard-\(getpid())-\(UInt32.random(in: 0 ... .max)).tmp" : path
        let descriptor = open(target, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            // Something is in the way of a new file (a dangling symlink, say): replace that
            // entry itself, by renaming over it.
            if !atomically, errno == EEXIST || errno == ELOOP { return try write(data, to: path, atomically: true) }
            throw Failure(path: target, code: errno)
        }
        var failure: Int32?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        close(descriptor)
        if let failure {
            unlink(target)
            throw Failure(path: target, code: failure)
        }
        if atomically, rename(target, path) != 0 {
            let code = errno
            unlink(target)
            throw Failure(path: path, code: code)
        }
    }
}

/// What writing each file came to, filled in from several threads.
private final class Outcomes: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Result<Bool, any Error>]

    init(count: Int) { values = Array(repeating: .success(false), count: count) }

    func set(_ index: Int, _ outcome: Result<Bool, any Error>) {
        lock.lock()
        values[index] = outcome
        lock.unlock()
    }

    var all: [Result<Bool, any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return values
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
