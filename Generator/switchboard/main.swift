import Foundation
import SwitchboardCLI

// Entry point: run the command and exit with its status.
CommandLineTool.ignoreBrokenPipes()
exit(await CommandLineTool.run(Array(CommandLine.arguments.dropFirst())))
