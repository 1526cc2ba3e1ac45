import Foundation
import PackagePlugin

/// Where a target's schema is and how its SDK is generated: the target's own `*.sb` files,
/// or `switchboard-config.json` in the target's folder naming another schema folder.
///
/// ```json
/// { "schema": "../../schema", "access": "public", "output": "Generated" }
/// ```
/// `schema` is relative to the target's folder; `access` is `public`, `package` or
/// `internal` (default `public`); `output` (only for `generate-sdk`) is where committed
/// code goes, relative to the target's folder (default `Generated`).
struct SchemaLocation {
    static let configurationName = "switchboard-config.json"

    /// The schema folder.
    let schema: URL
    /// Every `*.sb` file under it, sorted, with its path below it.
    let files: [(url: URL, relativePath: String)]
    let access: String
    let output: String
    /// The configuration file, when the target has one.
    let configuration: URL?

    /// Keys a configuration may hold; any other is an error rather than silently ignored.
    static let knownKeys: Set<String> = ["schema", "access", "output"]

    /// The target's schema, or `nil` when it has neither `*.sb` files nor a configuration.
    static func find(in target: SourceModuleTarget) throws -> SchemaLocation? {
        let directory = target.directoryURL
        let configurationURL = directory.appendingPathComponent(configurationName)
        var settings: [String: String] = [:]
        var configuration: URL?
        if FileManager.default.fileExists(atPath: configurationURL.path) {
            configuration = configurationURL
            settings = try read(configurationURL)
        }
        let schema = settings["schema"].map { directory.appendingPathComponent($0).standardizedFileURL } ?? directory
        let files = schemaFiles(under: schema)
        if configuration == nil && files.isEmpty { return nil }
        if files.isEmpty {
            throw PluginError("\(configurationURL.path): the schema folder \(schema.path) holds no *.sb files")
        }
        return SchemaLocation(schema: schema, files: files, access: settings["access"] ?? "public",
                              output: settings["output"] ?? "Generated", configuration: configuration)
    }

    static func read(_ url: URL) throws -> [String: String] {
        let data = try Data(contentsOf: url)
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw PluginError("\(url.path): expected a JSON object such as {\"schema\": \"../../schema\"}")
        }
        var settings: [String: String] = [:]
        for (key, value) in object {
            guard knownKeys.contains(key) else {
                throw PluginError("\(url.path): unknown key '\(key)'; known keys: \(knownKeys.sorted().joined(separator: ", "))")
            }
            guard let text = value as? String else { throw PluginError("\(url.path): '\(key)' must be a string") }
            settings[key] = text
        }
        return settings
    }

    /// `*.sb` files under `root`, recursively, as the generator reads them.
    static func schemaFiles(under root: URL) -> [(url: URL, relativePath: String)] {
        let rootPath = root.standardizedFileURL.path
        var files: [(URL, String)] = []
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "sb" else { continue }
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(rootPath) else { continue }
            files.append((url, String(path.dropFirst(rootPath.count).drop { $0 == "/" })))
        }
        return files.sorted { $0.1 < $1.1 }
    }

    /// The file `switchboard generate --layout per-schema-file` writes for a schema file.
    static func outputName(forRelativePath path: String) -> String {
        path.split(separator: "/").joined(separator: "_") + ".swift"
    }
}

/// A plugin failure with a message SwiftPM shows as is.
struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
