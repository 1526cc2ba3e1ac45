import Foundation
import PackagePlugin

/// Generates a target's SDK at build time from its `*.sb` files, or from the schema folder
/// its `switchboard-config.json` names. The generator's diagnostics (`file:line:column: error:`)
/// fail the build and show where the schema is wrong.
@main
struct SwitchboardGenerator: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        guard let target = target as? SourceModuleTarget, let location = try SchemaLocation.find(in: target) else { return [] }
        return [try Self.command(for: location, name: target.moduleName, tool: context.tool(named: "switchboard-generate").url,
                                 workDirectory: context.pluginWorkDirectoryURL)]
    }

    /// One command that generates every schema file's Swift file, named before it runs as
    /// `switchboard-generate --layout per-schema-file` names them.
    static func command(for location: SchemaLocation, name: String, tool: URL, workDirectory: URL) throws -> Command {
        if let committed = location.output, let configuration = location.configuration {
            throw PluginError("\(configuration.path) names an output (\(committed)): \(name)'s generated code is committed, so "
                + "`swift package generate-sdk` writes it; remove the SwitchboardGenerator plugin from the target, or the output")
        }
        let output = workDirectory.appendingPathComponent("Generated")
        // `chat/rooms.sb` and `chat_rooms.sb` would both be `chat_rooms.sb.swift` (names
        // differing only in case are one file on macOS): say so, instead of SwiftPM's report
        // of two commands producing one file.
        var seen: [String: String] = [:]
        for file in location.files {
            let name = SchemaLocation.outputName(forRelativePath: file.relativePath)
            if let first = seen.updateValue(file.relativePath, forKey: name.lowercased()) {
                throw PluginError("\(name): the schema files \(first) and \(file.relativePath) would generate one file; rename one")
            }
        }
        let outputs = location.files.map { output.appendingPathComponent(SchemaLocation.outputName(forRelativePath: $0.relativePath)) }
        return .buildCommand(
            displayName: "Generating the \(name) SDK from \(location.files.count) schema files",
            executable: tool,
            arguments: [location.schema.path, "--output", output.path, "--access", location.access, "--layout", "per-schema-file"]
                + location.importArguments,
            inputFiles: location.inputFiles,
            outputFiles: outputs)
    }
}

#if canImport(XcodeProjectPlugin)
import XcodeProjectPlugin

/// The same for an Xcode project's target: its `switchboard-config.json`, else the folder
/// that holds all of its `*.sb` files, is the target's folder.
extension SwitchboardGenerator: XcodeBuildToolPlugin {
    func createBuildCommands(context: XcodePluginContext, target: XcodeTarget) throws -> [Command] {
        let inputs = target.inputFiles.map(\.url)
        let folder: URL
        if let configuration = inputs.first(where: { $0.lastPathComponent == SchemaLocation.configurationName }) {
            folder = configuration.deletingLastPathComponent()
        } else {
            let schemaFiles = inputs.filter { $0.pathExtension == "sb" }
            guard let first = schemaFiles.first else { return [] }
            var common = first.deletingLastPathComponent().standardizedFileURL.pathComponents
            for file in schemaFiles.dropFirst() {
                let components = file.deletingLastPathComponent().standardizedFileURL.pathComponents
                common = Array(zip(common, components).prefix { $0 == $1 }.map(\.0))
            }
            folder = URL(fileURLWithPath: common.joined(separator: "/").replacingOccurrences(of: "//", with: "/"))
        }
        guard let location = try SchemaLocation.find(in: folder) else { return [] }
        return [try Self.command(for: location, name: target.displayName, tool: context.tool(named: "switchboard-generate").url,
                                 workDirectory: context.pluginWorkDirectoryURL)]
    }
}
#endif
