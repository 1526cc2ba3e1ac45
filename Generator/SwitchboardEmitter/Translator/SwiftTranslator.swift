import SwitchboardSchema

/// Options that shape generated Swift.
public struct SwiftEmitterOptions: Sendable, Hashable {
    /// How declarations are spread over files.
    public enum Layout: String, Sendable, Hashable, CaseIterable {
        /// One file per top-level type and per service, so a large schema compiles in
        /// parallel and a change recompiles only what it touches. For committed SDKs.
        case perType = "per-type"
        /// One file per schema file, named after it (``SwiftEmitter/outputName(forSchemaFile:)``),
        /// so a build plugin can name its outputs before running the generator.
        case perSchemaFile = "per-schema-file"
    }

    /// The access level of generated declarations: `public`, `package` or `internal`.
    public var accessLevel: String
    /// How declarations are spread over files.
    public var layout: Layout

    /// Creates options. Generated code never names the module it is compiled into, so
    /// no module name is needed.
    public init(accessLevel: String = "public", layout: Layout = .perType) {
        self.accessLevel = accessLevel
        self.layout = layout
    }
}

/// Translates a validated schema into structured Swift files: one per top-level type,
/// so a large schema compiles in parallel and a change recompiles only what it touches.
public struct SwiftTranslator: Sendable {
    /// The version written into generated headers.
    public static let generatorVersion = "0.1.0"

    let schema: Schema
    let options: SwiftEmitterOptions
    let mapping: SwiftTypeMapping
    /// Top-level names a nested type hides (``SwiftTypeMapping/shadowedTopLevelNames``),
    /// found once: every top-level file asks.
    let shadowed: Set<String>

    /// Creates a translator.
    public init(schema: Schema, options: SwiftEmitterOptions) {
        self.schema = schema
        self.options = options
        self.mapping = SwiftTypeMapping(schema: schema)
        shadowed = mapping.shadowedTopLevelNames
    }

    /// Every generated file, sorted by path.
    public func translate() -> [SwiftFile] {
        let files = translatePerType()
        guard options.layout == .perSchemaFile else { return files }
        // Every schema file gets its file, even one that declares nothing generated (only
        // keys, say), because a build plugin names its outputs before the generator runs.
        // Grouped once: filtering every file per schema file was quadratic (10,000 files, 20 s).
        let bySource = Dictionary(grouping: files, by: \.sourceFile)
        return schema.files.indices.map { index in
            let parts = bySource[index] ?? []
            return SwiftFile(
                path: SwiftEmitter.outputName(forSchemaFile: schema.files[index].path), header: header(fileIndex: index),
                imports: moduleImports, declarations: parts.flatMap(\.declarations), sourceFile: index)
        }.sorted { $0.path < $1.path }
    }

    func translatePerType() -> [SwiftFile] {
        perTypeUnits().concurrentMap { translate($0) }.sorted { $0.path < $1.path }
    }

    /// What one file of the per-type layout holds.
    enum PerTypeUnit: Sendable {
        case message(Int)
        case enumeration(Int)
        case service(Int)
        /// The keys, in a file of the given name.
        case keys(fileName: String)
    }

    /// The per-type layout's files, each translated on its own (on any core, in any order).
    func perTypeUnits() -> [PerTypeUnit] {
        var units: [PerTypeUnit] = []
        for (index, message) in schema.messages.enumerated() where message.parent == nil && message.importedFrom == nil {
            units.append(.message(index))
        }
        for (index, definition) in schema.enums.enumerated() where definition.parent == nil && definition.importedFrom == nil {
            units.append(.enumeration(index))
        }
        units += schema.services.indices.map(PerTypeUnit.service)
        if !schema.keys.isEmpty {
            // Named after what keys are for; beside a type of that name, a name no type can have.
            // Compared without case: macOS's default file system holds one of the two.
            let taken = units.contains { unit in
                switch unit {
                case let .message(index): schema.messages[index].swiftName.lowercased() == "credentials"
                case let .enumeration(index): schema.enums[index].swiftName.lowercased() == "credentials"
                case let .service(index): "\(schema.services[index].name)Service".lowercased() == "credentials"
                case .keys: false
                }
            }
            units.append(.keys(fileName: taken ? "Credentials+Keys" : "Credentials"))
        }
        return units
    }

    /// The file of one unit of the per-type layout.
    func translate(_ unit: PerTypeUnit) -> SwiftFile {
        switch unit {
        case let .message(index):
            let message = schema.messages[index]
            return file(named: message.swiftName, from: message.file,
                        declarations: messageDeclarations(index) + topLevelAlias(message.swiftName, if: shadowed))
        case let .enumeration(index):
            let definition = schema.enums[index]
            let declaration = EnumTranslator(mapping: mapping, access: options.accessLevel, index: index).declaration()
            return file(named: definition.swiftName, from: definition.file,
                        declarations: [.type(declaration)] + topLevelAlias(definition.swiftName, if: shadowed))
        case let .service(index):
            let service = schema.services[index]
            let declarations = ServiceTranslator(mapping: mapping, access: options.accessLevel, service: service).declarations()
            return file(named: "\(service.name)Service", from: service.file, declarations: declarations)
        case let .keys(fileName):
            // From the schema file that declares the first key.
            return file(named: fileName, from: schema.keys[0].location.file,
                        declarations: KeyTranslator(access: options.accessLevel).declarations(schema.keys))
        }
    }

    /// For a top-level type a nested one shadows: the alias code inside the shadowing
    /// message reaches it by.
    func topLevelAlias(_ name: String, if shadowed: Set<String>) -> [SwiftDeclaration] {
        guard shadowed.contains(name) else { return [] }
        return [.typeAlias(SwiftTypeAlias(
            documentation: ["`\(name)` for code inside a message whose nested `\(name)` hides it."],
            access: options.accessLevel, name: SwiftTypeMapping.topLevelAlias(name), target: name))]
    }

    func file(named name: String, from fileIndex: Int, declarations: [SwiftDeclaration]) -> SwiftFile {
        SwiftFile(path: "\(name).swift", header: header(fileIndex: fileIndex), imports: moduleImports,
                  declarations: declarations, sourceFile: fileIndex)
    }

    /// Foundation, the runtime, and the modules of imported packages. The well-known types
    /// are generated into the runtime itself, which does not import itself.
    var moduleImports: [String] {
        var modules: Set<String> = ["Foundation", WellKnownTypes.swiftModule]
        for package in schema.importedPackages { if let module = package.swiftModule { modules.insert(module) } }
        if schema.packageName == WellKnownTypes.packageName { modules.remove(WellKnownTypes.swiftModule) }
        return modules.sorted()
    }

    func header(fileIndex: Int) -> [String] {
        [
            "Generated by switchboard \(Self.generatorVersion) from \(schema.files[fileIndex].path) (package \(schema.packageName)).",
            "Do not edit: change the schema and run `switchboard generate`.",
        ]
    }

    /// The message's struct and conformance, then its nested types, each in an extension.
    func messageDeclarations(_ index: Int) -> [SwiftDeclaration] {
        let translator = MessageTranslator(mapping: mapping, access: options.accessLevel, index: index)
        var declarations: [SwiftDeclaration] = []
        let message = schema.messages[index]
        if message.parent == nil {
            declarations.append(.type(translator.structDeclaration()))
        } else {
            let parent = schema.messages[message.parent!]
            declarations.append(.type(SwiftTypeDeclaration(
                kind: .extension, name: parent.swiftPath, members: [.type(translator.structDeclaration())])))
        }
        declarations.append(.type(translator.conformance()))
        if let redaction = translator.redactedDescription() { declarations.append(.type(redaction)) }
        if let push = translator.pushPayloadConformance() { declarations.append(.type(push)) }
        for enumIndex in message.nestedEnums {
            let declaration = EnumTranslator(mapping: mapping, access: options.accessLevel, index: enumIndex).declaration()
            declarations.append(.type(SwiftTypeDeclaration(kind: .extension, name: message.swiftPath, members: [.type(declaration)])))
        }
        for nested in message.nestedMessages {
            declarations.append(contentsOf: messageDeclarations(nested))
        }
        return declarations
    }
}

/// One generated file: its path relative to the output directory and its text.
public struct GeneratedFile: Sendable, Hashable {
    public var path: String
    public var contents: String
    /// The schema file it was generated from, as diagnostics name it.
    public var sourcePath: String = ""
}

/// The whole Swift pipeline after the front end: translate, then render.
public enum SwiftEmitter {
    /// The first line every generated file starts with; `generate` uses it to tell its own
    /// files from hand-written ones when removing stale output.
    public static let headerMarker = "// Generated by switchboard "

    /// The file ``SwiftEmitterOptions/Layout/perSchemaFile`` writes for a schema file:
    /// its path below the schema directory (the display path less its first component, the
    /// directory's name), `/` turned into `_`, plus `.swift`: `chat/rooms.sb` in a schema
    /// loaded from `schema/` becomes `chat_rooms.sb.swift`. Build plugins derive the same name.
    public static func outputName(forSchemaFile path: String) -> String {
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        let relative = components.count > 1 ? components.dropFirst() : components[...]
        return relative.joined(separator: "_") + ".swift"
    }

    /// Generates every Swift file for `schema`. Files translate and render on every core.
    public static func generate(_ schema: Schema, options: SwiftEmitterOptions) -> [GeneratedFile] {
        // Translating and rendering recurse per level of nesting: on threads with room for it.
        DeepStack.run { generateOnThisThread(schema, options: options) }
    }

    private static func generateOnThisThread(_ schema: Schema, options: SwiftEmitterOptions) -> [GeneratedFile] {
        let renderer = SwiftRenderer()
        let translator = SwiftTranslator(schema: schema, options: options)
        @Sendable func render(_ file: SwiftFile) -> GeneratedFile {
            GeneratedFile(path: file.path, contents: renderer.render(file), sourcePath: schema.files[file.sourceFile].path)
        }
        guard options.layout == .perType else { return translator.translate().concurrentMap(render) }
        // Each file is translated, rendered and its structured form freed in one task: no
        // core waits for every translation before rendering, nor frees them all at the end.
        return translator.perTypeUnits().concurrentMap { render(translator.translate($0)) }.sorted { $0.path < $1.path }
    }
}
