import Foundation
import SwitchboardCLI
import SwitchboardEmitter
import SwitchboardSchema

/// The `switchboard` command: its usage and the dispatch to subcommands (argument parsing
/// and the generator's commands live in SwitchboardCLI, shared with `switchboard-generate`).
extension CommandLineTool {
    /// Each command's usage: its synopsis, then what it does.
    static let commands: [(name: String, usage: String)] = [
        ("generate", """
            generate <schema-dir> --output <dir> [--module <name>] [--access public|package|internal]
                     [--layout per-type|per-schema-file] [--check]
                Generate Swift from every *.sb file under <schema-dir>. With --check, write nothing:
                list stale, missing and extra files and exit 1 if the output is not up to date.
                --layout per-schema-file writes one <path_below_schema_dir>.sb.swift per schema file
                (what the build plugin uses). --module is accepted and has no effect: generated code
                never names its module, so it compiles in any. --well-known-types, in place of
                <schema-dir>, generates the google.protobuf types SwitchboardRuntime declares.
                --import-path <dir>[=<Module>] (repeatable, every command that reads a schema takes
                it) makes the package of the schema in <dir> importable (`import acme.common`);
                its types are generated into <Module>, or into the same module when none is given.
            """),
        ("export-proto", """
            export-proto <schema-dir> [--output <file.proto>]
                Write the proto3 equivalent of the schema (to standard output by default).
            """),
        ("export-catalogue", """
            export-catalogue <schema-dir> --output <dir> [--check]
                Write the schema as a published service catalogue: services.yml (each service's
                spec, versions, folder, status and countries), and per service a folder with
                definition.yml (its requests and endpoints with versions, files and folders) and
                a JSON Type Definition (RFC 8927) of every request, response, error body and
                event payload. --check compares instead of writing.
            """),
        ("lint", """
            lint <schema-dir>
                Check the schema and print diagnostics.
            """),
        ("call", """
            call --url <ws-url> <Service.endpoint> [<json>|-] [--schema <dir>] [--credentials <user.device:password> | --credentials-file <file>]
                 [--key <name>=<value>]... [--header "<Name>: <value>"]... [--timeout <seconds>] [--verbose]
                 [--transport websocket|grpc]
                Send one request over a chat connection: JSON in (- reads at most 64 MiB of standard
                input), the binary or JSON body the schema says on the wire, the decoded response
                (or the typed error) out as JSON. --verbose
                prints the request and response heads to standard error, secrets redacted.
                Credentials may also come from $SWITCHBOARD_CREDENTIALS, out of the process list.
                --transport grpc calls the endpoint's rpcName over gRPC instead: --url is then
                http://host:port (h2c) or https://host:port (TLS), credentials go as metadata.
            """),
        ("listen", """
            listen --url <ws-url> [--schema <dir>] [--credentials <user.device:password> | --credentials-file <file>] [--count <n>] [--timeout <seconds>]
                   [--header "<Name>: <value>"]... [--transport websocket|grpc]
                Print each pushed event as a JSON line and acknowledge it. Servers push to
                authenticated connections only, so pass credentials (or $SWITCHBOARD_CREDENTIALS).
                Ends 0 after --count events, or at --timeout or a normal close without --count;
                ends 1 when it never connected, the connection failed or closed abnormally, or
                fewer than --count events came.
                --transport grpc subscribes to each service's events over gRPC instead
                (SwitchboardEvents, acknowledged through SwitchboardAcknowledge): --url is then
                http://host:port (h2c) or https://host:port (TLS), credentials go as metadata,
                and without credentials only the services of `auth none` are listened to.
            """),
        ("mock-server", """
            mock-server [--schema <dir>] [--port <n>] [--grpc-port <n>] [--responses <file.json>] [--pushes <file.json>]
                 [--max-connections <n>] [--idle-timeout <seconds>] [--message-timeout <seconds>]
                 [--max-message-bytes <n>]
                 [--require-credentials (--credentials <user.device:password> | --credentials-file <file>)]
                Serve every endpoint of the schema on a loopback port with canned or scripted
                responses, and deliver scripted pushes to each client that connects. At most
                1,024 clients at once (--max-connections; past it: 503), each closed after 120 s of
                silence (--idle-timeout, 0: never) and given 30 s to send one message
                (--message-timeout), for --grpc-port too; messages up to 512 KiB (4 MiB over gRPC;
                --max-message-bytes sets both, 125 bytes to 256 MiB).
                Any credentials open the authenticated connection unless --require-credentials
                is given: then only these do, others are refused with 401, and a client without
                credentials still gets the unauthenticated connection. --grpc-port serves the
                same endpoints and scripts over gRPC (h2c) as well, each as its rpcName; an
                authenticated subscription to a service's events gets that service's pushes.
                The address lines come first on standard output; the log of calls follows from
                a writer of its own, so a reader that stops reading never stalls the server:
                past 10,000 waiting lines (or 1 MiB) lines are dropped, then counted in a line.
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
                // `help generate` is `generate --help`.
                if let topic = rest.positional.first {
                    guard let text = usage(of: topic) else { throw UsageError("unknown command '\(topic)'") }
                    print(text)
                } else {
                    print(usage)
                }
                return 0
            case "--version":
                print("switchboard \(SwiftTranslator.generatorVersion)")
                return 0
            case "generate":
                return try GenerateCommand.run(rest)
            case "export-proto":
                return try ExportProtoCommand.run(rest)
            case "export-catalogue":
                return try ExportCatalogueCommand.run(rest)
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
}
