import Foundation
import SwitchboardCLI
import SwitchboardEmitter

// `switchboard-generate`: `switchboard generate` alone, for the SwiftPM plugins, so a package
// that generates its SDK builds the generator without the chat runtime, the WebSocket stack
// or OpenSSL, which only `switchboard call`, `listen` and `mock-server` need.
CommandLineTool.ignoreBrokenPipes()
let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    USAGE: switchboard-generate <schema-dir> --output <dir> [--access public|package|internal]
                                [--layout per-type|per-schema-file] [--module <name>] [--check]
                                [--import-path <dir>[=<SwiftModule>]]... [--well-known-types]
        As `switchboard generate`; see `switchboard generate --help`.
    Exit status: 0 success, 1 schema errors or stale output, 2 usage error.
    """
if arguments.contains("--help") || arguments.contains("-h") {
    print(usage)
    exit(0)
}
if arguments == ["--version"] {
    print("switchboard \(SwiftTranslator.generatorVersion)")
    exit(0)
}
do throws(CommandLineTool.UsageError) {
    exit(try GenerateCommand.run(CommandLineTool.Arguments(arguments)))
} catch {
    CommandLineTool.printError("switchboard-generate: error: \(error.message)")
    CommandLineTool.printError("hint: run 'switchboard-generate --help' for usage")
    exit(2)
}
