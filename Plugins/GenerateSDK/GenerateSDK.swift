import Foundation
import PackagePlugin

/// `swift package generate-sdk [--target <name>]... [--check]`: writes each target's SDK
/// into its folder (`Generated/` unless `switchboard-config.json` says otherwise), for teams
/// that commit generated code. `--check` writes nothing and fails when the committed code is
/// stale, for CI. Run bare, it generates every target whose `switchboard-config.json` names an
/// `output`; `--target` takes any target with a schema (into `Generated/` by default).
@main
struct GenerateSDK: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        var extractor = ArgumentExtractor(arguments)
        let names = extractor.extractOption(named: "target")
        let check = extractor.extractFlag(named: "check") > 0
        if !extractor.remainingArguments.isEmpty {
            throw PluginError("unknown arguments: \(extractor.remainingArguments.joined(separator: " ")); usage: generate-sdk [--target <name>]... [--check]")
        }
        let targets = names.isEmpty ? context.package.targets : try context.package.targets(named: names)
        let tool = try context.tool(named: "switchboard-generate").url
        var generated = 0
        var failed: [String] = []
        for case let target as SourceModuleTarget in targets {
            // Run bare, only targets whose configuration names an `output`: a target's own *.sb
            // files may be the build plugin's input, or test data, and generating them here
            // would declare every type twice.
            guard let location = try SchemaLocation.find(in: target, committedOnly: names.isEmpty) else {
                if !names.isEmpty { throw PluginError("target \(target.name) has no *.sb files and no \(SchemaLocation.configurationName)") }
                continue
            }
            generated += 1
            let output = target.directoryURL.appendingPathComponent(location.output ?? "Generated").standardizedFileURL
            var arguments = [location.schema.path, "--output", output.path, "--access", location.access] + location.importArguments
            if check { arguments.append("--check") }
            let process = Process()
            process.executableURL = tool
            process.arguments = arguments
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus != 0 { failed.append(target.name) }
        }
        if generated == 0 {
            throw PluginError("no target's \(SchemaLocation.configurationName) names an \"output\"; name a target with --target")
        }
        if !failed.isEmpty {
            // The generator exits 1 for schema errors and for stale code alike; its own output
            // above says which.
            throw PluginError(check ? "generate-sdk --check failed for \(failed.joined(separator: ", ")): fix the schema errors above, or run `swift package generate-sdk` if the code is stale"
                                    : "could not generate \(failed.joined(separator: ", "))")
        }
    }
}
