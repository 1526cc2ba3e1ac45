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

        package init(_ arguments: [String]) throws(UsageError) {
            var index = 0
            while index < arguments.count {
                let argument = arguments[index]
                if Self.flagNames.contains(argument) {
                    flags.insert(argument)
                } else if argument.hasPrefix("--") {
                    let parts = argument.split(separator: "=", maxSplits: 1).map(String.init)
                    if parts.count == 2 {
                        options[parts[0]] = parts[1]
                        repeated[parts[0], default: []].append(parts[1])
                    } else {
                        guard index + 1 < arguments.count else { throw UsageError("option \(argument) needs a value") }
                        options[argument] = arguments[index + 1]
                        repeated[argument, default: []].append(arguments[index + 1])
                        index += 1
                    }
                } else if argument == "-o" {
                    guard index + 1 < arguments.count else { throw UsageError("option -o needs a value") }
                    options["--output"] = arguments[index + 1]
                    index += 1
                } else {
                    positional.append(argument)
                }
                index += 1
            }
        }

        /// `--import-path <dir>[=<SwiftModule>]`, which every command that reads a schema takes.
        package var importPaths: [SchemaCompiler.ImportPath] {
            (repeated["--import-path"] ?? []).map { value in
                guard let equals = value.lastIndex(of: "="), value.index(after: equals) != value.endIndex else {
                    return SchemaCompiler.ImportPath(directory: URL(fileURLWithPath: value))
                }
                return SchemaCompiler.ImportPath(directory: URL(fileURLWithPath: String(value[..<equals])),
                                                 swiftModule: String(value[value.index(after: equals)...]))
            }
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
        FileHandle.standardError.write(Data((safe.hasSuffix("\n") ? safe : safe + "\n").utf8))
    }

    /// Compiles the schema directory at `path`, printing its errors (warnings only with
    /// `warnings`: tools that merely read the schema should not repeat the generator's advice).
    package static func compileSchema(at path: String, importPaths: [SchemaCompiler.ImportPath] = [], warnings: Bool = false) throws(UsageError) -> Schema? {
        try checkSchemaDirectory(path)
        for importPath in importPaths { try checkSchemaDirectory(importPath.directory.relativePath) }
        let output = SchemaCompiler.compile(directory: URL(fileURLWithPath: path), importPaths: importPaths)
        if !output.diagnostics.isEmpty && (warnings || output.schema == nil) { printError(output.renderedDiagnostics(directoryAsGiven: path)) }
        return output.schema
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
        for importPath in arguments.importPaths { try checkSchemaDirectory(importPath.directory.relativePath) }
        let output = SchemaCompiler.compile(directory: URL(fileURLWithPath: arguments.positional[0]), importPaths: arguments.importPaths)
        if !output.diagnostics.isEmpty { printError(output.renderedDiagnostics(directoryAsGiven: arguments.positional[0])) }
        return output.schema
    }
}
