import Foundation
import PackagePlugin

/// Generates a target's SDK at build time from its `*.sb` files, or from the schema folder
/// its `switchboard-config.json` names. The generator's diagnostics (`file:line:column: error:`)
/// fail the build and show where the schema is wrong.
@main
struct SwitchboardGenerator: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget, let location = try SchemaLocation.find(in: target) else { return [] }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("Generated")
        let outputs = location.files.map { output.appendingPathComponent(SchemaLocation.outputName(forRelativePath: $0.relativePath)) }
        return [
            .buildCommand(
                displayName: "Generating the \(target.moduleName) SDK from \(location.files.count) schema files",
                executable: try context.tool(named: "switchboard").url,
                arguments: [
                    "generate", location.schema.path, "--output", output.path, "--module", target.moduleName,
                    "--access", location.access, "--layout", "per-schema-file",
                ],
                inputFiles: location.files.map(\.url) + (location.configuration.map { [$0] } ?? []),
                outputFiles: outputs),
        ]
    }
}
