import Foundation
import SwitchboardEmitter
import SwitchboardSchema

/// The `switchboard` command: argument parsing and dispatch to subcommands.
enum CommandLineTool {
    /// Each command's usage: its synopsis, then what it does.
    static let commands: [(name: String, usage: String)] = [
        ("generate", """
            generate <schema-dir> --output <dir> [--module <name>] [--access public|package|internal]
                     [--layout per-type|per-schema-file] [--check]
                Generate Swift from every *.sb file under <schema-dir>. With --check, write nothing:
                list stale, missing and extra files and exit 1 if the output is not up to date.
                --module names the module the code is compiled into (default: the folder above a
                Generated output folder, else the output folder's name). --layout per-schema-file
                writes one <path_below_schema_dir>.sb.swift per schema file (what the build plugin uses).
            """),
        ("export-proto", """
            export-proto <schema-dir> [--output <file.proto>]
                Write the proto3 equivalent of the schema (to standard output by default).
            """),
        ("lint", """
            lint <schema-dir>
                Check the schema and print diagnostics.
            """),
        ("call", """
            call --url <ws-url> <Service.endpoint> [<json>|-] [--schema <dir>] [--credentials <user.device:password> | --credentials-file <file>]
                 [--key <name>=<value>]... [--header "<Name>: <value>"]... [--timeout <seconds>] [--verbose]
                Send one request over a chat connection: JSON in, the binary or JSON body the schema
                says on the wire, the decoded response (or the typed error) out as JSON. --verbose
                prints the request and response heads to standard error, secrets redacted.
                Credentials may also come from $SWITCHBOARD_CREDENTIALS, out of the process list.
            """),
        ("listen", """
            listen --url <ws-url> [--schema <dir>] [--credentials <user.device:password> | --credentials-file <file>] [--count <n>] [--timeout <seconds>]
                Print each pushed event as a JSON line and acknowledge it. Servers push to
                authenticated connections only, so pass credentials (or $SWITCHBOARD_CREDENTIALS).
            """),
        ("mock-server", """
            mock-server [--schema <dir>] [--port <n>] [--responses <file.json>] [--pushes <file.json>]
                 [--max-connections <n>] [--idle-timeout <seconds>]
                 [--require-credentials (--credentials <user.device:password> | --credentials-file <file>)]
                Serve every endpoint of the schema on a loopback port with canned or scripted
                responses, and deliver scripted pushes to each client that connects. At most
                1,024 clients at once (past it: 503), each closed after 120 s of silence (0: never).
                Any credentials open the authenticated connection unless --require-credentials
                is given: then only these do, others are refused with 401, and a client without
                credentials still gets the unauthenticated connection.
            """),
    ]

    static let usage = """
        USAGE: switchboard <command> [options]

        COMMANDS:
        \(commands.map { $0.usage.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n") }.joined(separator: "\n"))
          --version, --help
              Run 'switchboard <command> --help' for one command's usage.

        Exit status: 0 success, 1 schema errors, stale output or a failed call, 2 usage error.
        """

    /// One command's usage, with the exit statuses.
    static func usage(of command: String) -> String? {
        commands.first { $0.name == command }.map {
            "USAGE: switchboard " + $0.usage + "\nExit status: 0 success, 1 schema errors, stale output or a failed call, 2 usage error."
        }
    }

    /// Parsed `--name value` options and positional arguments.
    struct Arguments {
        var positional: [String] = []
        var options: [String: String] = [:]
        /// Every value of options that may repeat (`--key`, `--header`), in order.
        var repeated: [String: [String]] = [:]
        var flags: Set<String> = []

        static let flagNames: Set<String> = ["--check", "--help", "--version", "--verbose", "--require-credentials"]

        init(_ arguments: [String]) throws(UsageError) {
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

        func rejectUnknown(allowed: Set<String>) throws(UsageError) {
            for key in options.keys.sorted() where !allowed.contains(key) {
                throw UsageError("unknown option \(key)")
            }
        }
    }

    struct UsageError: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    static func run(_ arguments: [String]) async -> Int32 {
        do throws(UsageError) {
            guard let command = arguments.first else {
                printError(usage)
                return 2
            }
            // `<command> --help` answers before anything else is parsed or started.
            if arguments.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }), let text = usage(of: command) {
                print(text)
                return 0
            }
            let rest = try Arguments(Array(arguments.dropFirst()))
            switch command {
            case "--help", "-h", "help":
                print(usage)
                return 0
            case "--version":
                print("switchboard \(SwiftTranslator.generatorVersion)")
                return 0
            case "generate":
                return try GenerateCommand.run(rest)
            case "export-proto":
                return try ExportProtoCommand.run(rest)
            case "lint":
                return try LintCommand.run(rest)
            case "call":
                return try await CallCommand.run(rest)
            case "listen":
                return try await ListenCommand.run(rest)
            case "mock-server":
                return try await MockServerCommand.run(rest)
            default:
                throw UsageError("unknown command '\(command)'")
            }
        } catch {
            // One line and a hint: the whole usage text would bury the error.
            let known = arguments.first.flatMap { usage(of: $0) } != nil
            printError("switchboard: error: \(error.message)")
            printError("hint: run 'switchboard \(known ? arguments[0] + " --help" : "--help")' for usage")
            return 2
        }
    }

    static func printError(_ text: String) {
        let safe = TerminalText.sanitized(text)
        FileHandle.standardError.write(Data((safe.hasSuffix("\n") ? safe : safe + "\n").utf8))
    }

    /// Compiles the schema directory at `path`, printing its errors (warnings only with
    /// `warnings`: tools that merely read the schema should not repeat the generator's advice).
    static func compileSchema(at path: String, warnings: Bool = false) throws(UsageError) -> Schema? {
        try checkSchemaDirectory(path)
        let output = SchemaCompiler.compile(directory: URL(fileURLWithPath: path))
        if !output.diagnostics.isEmpty && (warnings || output.schema == nil) { printError(output.renderedDiagnostics(directoryAsGiven: path)) }
        return output.schema
    }

    /// Throws a usage error that says what is expected when `path` is not a directory:
    /// a schema is every `*.sb` file of a directory, so a single file is named as such.
    static func checkSchemaDirectory(_ path: String) throws(UsageError) {
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
    static func compileSchema(_ arguments: Arguments) throws(UsageError) -> Schema? {
        guard arguments.positional.count == 1 else {
            throw UsageError("expected exactly one schema directory, got \(arguments.positional.count)")
        }
        try checkSchemaDirectory(arguments.positional[0])
        let output = SchemaCompiler.compile(directory: URL(fileURLWithPath: arguments.positional[0]))
        if !output.diagnostics.isEmpty { printError(output.renderedDiagnostics(directoryAsGiven: arguments.positional[0])) }
        return output.schema
    }
}
