import Foundation
import PackagePlugin

/// Where a target's schema is and how its SDK is generated: the target's own `*.sb` files,
/// or `switchboard-config.json` in the target's folder naming another schema folder.
///
/// ```json
/// { "schema": "../../schema", "access": "public", "output": "Generated",
///   "imports": { "../RoomsAPI": "RoomsAPI" } }
/// ```
/// `schema` is relative to the target's folder; `access` is `public`, `package` or
/// `internal` (default `public`); `output` marks a target whose generated code is committed
/// (written by `generate-sdk`, never by the build plugin) and says where it goes, relative to
/// the target's folder; `imports` maps schema folders whose packages the schema imports
/// (relative to the target's folder) to the modules their types are generated into (`""`: this
/// target's own module). The target must depend on those modules.
struct SchemaLocation {
    static let configurationName = "switchboard-config.json"

    /// The schema folder.
    let schema: URL
    /// Every `*.sb` file under it, sorted, with its path below it.
    let files: [(url: URL, relativePath: String)]
    let access: String
    /// Where committed code goes (the configuration's `output`); `nil` for a target whose
    /// code is generated at build time.
    let output: String?
    /// The configuration file, when the target has one.
    let configuration: URL?
    /// Schema folders the schema imports packages from, each with its module (`""` for this one).
    var imports: [(schema: URL, module: String)] = []

    /// Keys a configuration may hold; any other is an error rather than silently ignored.
    static let knownKeys: Set<String> = ["schema", "access", "output", "imports"]

    /// The generator's `--import-path` arguments for ``imports``.
    var importArguments: [String] {
        imports.flatMap { ["--import-path", $0.module.isEmpty ? $0.schema.path : "\($0.schema.path)=\($0.module)"] }
    }

    /// The files of the schema and of the schemas it imports: what the build depends on.
    var inputFiles: [URL] {
        files.map(\.url) + imports.flatMap { (try? Self.schemaFiles(under: $0.schema).get().map(\.url)) ?? [] } + (configuration.map { [$0] } ?? [])
    }

    /// The target's schema, or `nil` when it has neither `*.sb` files nor a configuration
    /// (or, with `committedOnly`, no configuration with an `output`).
    static func find(in target: SourceModuleTarget, committedOnly: Bool = false) throws -> SchemaLocation? {
        try find(in: target.directoryURL, committedOnly: committedOnly)
    }

    /// The schema of the target whose folder is `directory`.
    static func find(in directory: URL, committedOnly: Bool = false) throws -> SchemaLocation? {
        let configurationURL = directory.appendingPathComponent(configurationName)
        var settings: [String: String] = [:]
        var imports: [String: String] = [:]
        var configuration: URL?
        if FileManager.default.fileExists(atPath: configurationURL.path) {
            configuration = configurationURL
            (settings, imports) = try read(configurationURL)
        }
        let schema = settings["schema"].map { directory.appendingPathComponent($0).standardizedFileURL } ?? directory
        let files = schemaFiles(under: schema)
        if committedOnly && settings["output"] == nil { return nil }
        if configuration == nil && files.isEmpty { return nil }
        if files.isEmpty {
            throw PluginError("\(configurationURL.path): the schema folder \(schema.path) holds no *.sb files")
        }
        let access = settings["access"] ?? "public"
        guard ["public", "package", "internal"].contains(access) else {
            throw PluginError("\(configurationURL.path): 'access' must be public, package or internal, not '\(access)'")
        }
        var location = SchemaLocation(schema: schema, files: try files.get(), access: access,
                                      output: settings["output"], configuration: configuration)
        location.imports = imports.keys.sorted().map { (directory.appendingPathComponent($0).standardizedFileURL, imports[$0]!) }
        return location
    }

    static func read(_ url: URL) throws -> (settings: [String: String], imports: [String: String]) {
        let data = try Data(contentsOf: url)
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: data)
        } catch {
            throw PluginError("\(url.path): not valid JSON: \(error.localizedDescription)")
        }
        guard let object = parsed as? [String: Any] else {
            throw PluginError("\(url.path): expected a JSON object such as {\"schema\": \"../../schema\"}")
        }
        var settings: [String: String] = [:]
        var imports: [String: String] = [:]
        for (key, value) in object {
            guard knownKeys.contains(key) else {
                throw PluginError("\(url.path): unknown key '\(key)'; known keys: \(knownKeys.sorted().joined(separator: ", "))")
            }
            if key == "imports" {
                guard let map = value as? [String: String] else {
                    throw PluginError("\(url.path): 'imports' must map schema folders to module names, such as {\"../RoomsAPI\": \"RoomsAPI\"}")
                }
                imports = map
                continue
            }
            guard let text = value as? String else { throw PluginError("\(url.path): '\(key)' must be a string") }
            settings[key] = text
        }
        return (settings, imports)
    }

    /// `*.sb` files under `root`, recursively, as the generator reads them. A file whose
    /// path does not start with the root's (a link resolved elsewhere) is an error: the
    /// generator would write an output for it that the build never declared.
    static func schemaFiles(under root: URL) -> SchemaFiles {
        let rootPath = root.standardizedFileURL.path
        var files: [(url: URL, relativePath: String)] = []
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == "sb" else { continue }
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(rootPath + "/") else {
                return SchemaFiles(files: [], problem: "\(path) is not below the schema folder \(rootPath) as given; name the folder by its resolved path")
            }
            files.append((url, String(path.dropFirst(rootPath.count + 1))))
        }
        return SchemaFiles(files: files.sorted { $0.relativePath < $1.relativePath }, problem: nil)
    }

    /// The schema files found, or why they cannot be used.
    struct SchemaFiles {
        let files: [(url: URL, relativePath: String)]
        let problem: String?
        var isEmpty: Bool { files.isEmpty && problem == nil }
        func get() throws -> [(url: URL, relativePath: String)] {
            if let problem { throw PluginError(problem) }
            return files
        }
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
