import Foundation
import SwitchboardSchema

/// What every command of the `switchboard` and `switchboard-generate` executables shares:
/// argument parsing, usage errors, error output and loading a schema. Each executable adds
/// its own usage and dispatch in an extension.
package enum CommandLineTool {
    /// Parsed `--name value` options and positional arguments.
    package struct Arguments {
        package var positional: [String] = []
        package var options: [String: String] = [:]
        /// Every value of options that may repeat (`--key`, `--header`), in order.
        package var repeated: [String: [String]] = [:]
        package var flags: Set<String> = []

        package static let flagNames: Set<String> = ["--check", "--help", "--version", "--verbose", "--require-credentials", "--well-known-types"]

        /// Options that may be given more than once; any other option given twice is a usage
        /// error, not a silent choice of the last value.
        package static let repeatableOptions: Set<String> = ["--key", "--header", "--import-path"]

        /// Parses `--name value`, `--name=value`, flags, `-o value` and positional arguments;
        /// everything after `--` is positional. A value that looks like an option
        /// (`--output --check`) is refused, as swift-argument-parser does, so a missing value
        /// cannot turn the next flag into a folder name; `--output=--check` still means it.
        package init(_ arguments: [String]) throws(UsageError) {
            var index = 0
            var optionsEnded = false
            while index < arguments.count {
                let argument = arguments[index]
                if optionsEnded {
                    positional.append(argument)
                } else if argument == "--" {
                    optionsEnded = true
                } else if Self.flagNames.contains(argument) {
                    flags.insert(argument)
                } else if argument.hasPrefix("--") || argument == "-o" {
                    // Empty pieces kept: `--output=` is an empty value (refused), not one that
                    // takes the next argument.
                    let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                    let name = argument == "-o" ? "--output" : parts[0]
                    let value: String
                    if parts.count == 2, argument != "-o" {
                        guard !parts[1].isEmpty else { throw UsageError("option \(name) needs a value after '='") }
                        value = parts[1]
                    } else {
                        guard index + 1 < arguments.count else { throw UsageError("option \(argument) needs a value") }
                        value = arguments[index + 1]
                        if value.hasPrefix("--") {
                            throw UsageError("option \(argument) needs a value, got the option \(value) (write \(name)=\(value) if that is the value)")
                        }
                        index += 1
                    }
                    if options[name] != nil, !Self.repeatableOptions.contains(name) {
                        throw UsageError("option \(name) is given more than once")
                    }
                    options[name] = value
                    repeated[name, default: []].append(value)
                } else {
                    positional.append(argument)
                }
                index += 1
            }
        }

        /// `--import-path <dir>[=<SwiftModule>]`, which every command that reads a schema takes.
        /// A directory may itself contain `=`: the value is all directory when it names one, or
        /// when what follows its last `=` has a `/` (no module name does).
        package var importPaths: [SchemaCompiler.ImportPath] {
            (repeated["--import-path"] ?? []).map { value in
                guard let equals = value.lastIndex(of: "="), value.index(after: equals) != value.endIndex,
                      !value[equals...].contains("/"), !Self.isDirectory(value) else {
                    return SchemaCompiler.ImportPath(directory: URL(fileURLWithPath: value))
                }
                return SchemaCompiler.ImportPath(directory: URL(fileURLWithPath: String(value[..<equals])),
                                                 swiftModule: String(value[value.index(after: equals)...]))
            }
        }

        private static func isDirectory(_ path: String) -> Bool {
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
        }

        /// Refuses options and flags the command does not take: a flag meant for another
        /// command (`export-proto --check`) must not be ignored while the command writes.
        package func rejectUnknown(allowed: Set<String>, flags allowedFlags: Set<String> = []) throws(UsageError) {
            for key in options.keys.sorted() where !allowed.contains(key) && key != "--import-path" {
                throw UsageError("unknown option \(key)")
            }
            for flag in flags.sorted() where !allowedFlags.contains(flag) && flag != "--help" {
                throw UsageError("this command does not take \(flag)")
            }
        }
    }

    package struct UsageError: Error {
        package let message: String
        package init(_ message: String) { self.message = message }
    }

    package static func printError(_ text: String) {
        let safe = TerminalText.sanitized(text)
        writeIgnoringClosedOutput(safe.hasSuffix("\n") ? safe : safe + "\n", to: .standardError)
    }

    /// Writes `text`, and drops it if the reader has gone (a closed pipe): the command goes on
    /// (a mock server keeps serving after `| head -1`) instead of dying of SIGPIPE or trapping
    /// in `FileHandle.write(_:)`. Call `ignoreBrokenPipes()` first.
    package static func writeIgnoringClosedOutput(_ text: String, to handle: FileHandle) {
        try? handle.write(contentsOf: Data(text.utf8))
    }

    /// A `--check`'s report: each problem on standard output, then the verdict; the exit status
    /// (0 up to date, 1 stale).
    package static func reportCheck(_ problems: [String], upToDate: String, stale: String) -> Int32 {
        if problems.isEmpty {
            print("switchboard: \(upToDate)")
            return 0
        }
        for problem in problems { print(problem) }
        printError("switchboard: \(stale)")
        return 1
    }

    /// At most `limit` bytes from `handle` (a file, a pipe or standard input), or a usage
    /// error naming `what`: a FIFO or `/dev/zero` must not grow memory without end, and a
    /// read error (a directory given as standard input) is reported, not a trap.
    package static func read(_ what: String, from handle: FileHandle, atMost limit: Int) throws(UsageError) -> Data {
        let data: Data
        do {
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw UsageError("cannot read \(what): \(error.localizedDescription)")
        }
        guard data.count <= limit else { throw UsageError("\(what) is larger than \(limit >= 1 << 20 ? "\(limit >> 20) MiB" : "\(limit) bytes")") }
        return data
    }

    /// At most `limit` bytes of the file at `path` (see `read(_:from:atMost:)`).
    package static func readFile(_ path: String, atMost limit: Int) throws(UsageError) -> Data {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw UsageError("cannot read \(path)") }
        defer { try? handle.close() }
        return try read(path, from: handle, atMost: limit)
    }

    /// A write to a closed pipe fails with EPIPE instead of killing the process. Sockets send
    /// with MSG_NOSIGNAL already; this covers standard output and error.
    package static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Compiles the schema directory at `path`, printing its errors (warnings only with
    /// `warnings`: tools that merely read the schema should not repeat the generator's advice).
    package static func compileSchema(at path: String, importPaths: [SchemaCompiler.ImportPath] = [], warnings: Bool = false) throws(UsageError) -> Schema? {
        try checkSchemaDirectory(path)
        for importPath in importPaths { try checkImportPath(importPath) }
        let output = SchemaCompiler.compile(directory: URL(fileURLWithPath: path), importPaths: importPaths)
        if !output.diagnostics.isEmpty && (warnings || output.schema == nil) { printError(output.renderedDiagnostics(directoryAsGiven: path)) }
        return output.schema
    }

    /// An `--import-path` must name a schema directory and, after `=`, a Swift module name:
    /// generated code writes `import <module>`, which must compile.
    package static func checkImportPath(_ importPath: SchemaCompiler.ImportPath) throws(UsageError) {
        try checkSchemaDirectory(importPath.directory.relativePath)
        if let module = importPath.swiftModule, !SwiftNames.isModuleName(module) {
            throw UsageError("--import-path \(importPath.directory.relativePath)=\(module): '\(module)' is not a Swift module name (an ASCII identifier of letters, digits and '_', not starting with a digit, that is not a keyword)")
        }
    }

    /// Throws a usage error that says what is expected when `path` is not a directory:
    /// a schema is every `*.sb` file of a directory, so a single file is named as such.
    package static func checkSchemaDirectory(_ path: String) throws(UsageError) {
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        if exists && isDirectory.boolValue { return }
        if exists {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().relativePath
            throw UsageError("'\(path)' is a file; a schema is a directory of *.sb files (try '\(folder.isEmpty ? "." : folder)')")
        }
        throw UsageError("schema directory '\(path)' does not exist")
    }

    /// Compiles the schema directory named by the single positional argument, printing diagnostics.
    package static func compileSchema(_ arguments: Arguments) throws(UsageError) -> Schema? {
        guard arguments.positional.count == 1 else {
            throw UsageError("expected exactly one schema directory, got \(arguments.positional.count)")
        }
        try checkSchemaDirectory(arguments.positional[0])
        for importPath in arguments.importPaths { try checkImportPath(importPath) }
        let output = SchemaCompiler.compile(directory: URL(fileURLWithPath: arguments.positional[0]), importPaths: arguments.importPaths)
        if !output.diagnostics.isEmpty { printError(output.renderedDiagnostics(directoryAsGiven: arguments.positional[0])) }
        return output.schema
    }
}
