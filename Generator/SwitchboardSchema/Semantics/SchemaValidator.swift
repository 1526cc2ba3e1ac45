/// Checks parsed files against the language's rules and builds the validated ``Schema``.
///
/// Checks run in passes (package, declarations, fields, enums, recursion, Swift
/// names) and each reports every problem it finds, so one run lists them all.
struct SchemaValidator {
    let files: [SourceFile]
    let syntax: [FileSyntax]
    var diagnostics = DiagnosticCollector()

    var packageName = ""
    var packageComponents: [String] = []
    var messages: [MessageDefinition] = []
    var enums: [EnumDefinition] = []
    /// Syntax for each entry of `messages` and `enums`, kept for the later passes.
    var messageSyntax: [MessageSyntax] = []
    var enumSyntax: [EnumSyntax] = []
    var serviceSyntax: [(syntax: ServiceSyntax, file: Int)] = []
    /// Error sets by name, each without the cases that repeat an earlier one's status or name
    /// (reported once, where the set is declared).
    var errorSetSyntax: [String: ErrorSetSyntax] = [:]
    var keySyntax: [KeySyntax] = []
    var services: [ServiceDefinition] = []
    var keys: [KeyDefinition] = []
    /// Key name → index in `keys`.
    var keyIndexByName: [String: Int] = [:]
    /// Message index → its fields by name and by JSON name (the first field with either),
    /// made when a route first binds to the message.
    var fieldIndexByName: [Int: [String: Int]] = [:]
    /// Type path (`Outer.Inner`) → type.
    var typesByPath: [String: TypeReference] = [:]
    /// Packages the caller supplies for this schema to import (the built-in ones come on top).
    let suppliedImports: [String: ImportableSchema]
    /// Packages linked so far.
    var linkedPackages: Set<String> = []
    var importedPackages: [ImportedPackage] = []
    /// Full name (`google.protobuf.Duration`) → type, for types of linked packages.
    var importedTypesByFullName: [String: TypeReference] = [:]
    /// "Did you mean" hints left to give: each compares a name with every candidate, so a
    /// schema full of unknown names gets hints for its first ones only.
    var suggestionsLeft = 100

    /// Whether a hint may still be given (and uses one up).
    mutating func takeSuggestion() -> Bool {
        guard suggestionsLeft > 0 else { return false }
        suggestionsLeft -= 1
        return true
    }

    enum TypeReference: Hashable {
        case message(Int)
        case enumeration(Int)
    }

    /// The limits the schema is held to (reserved entries, here).
    let limits: SchemaLimits

    init(files: [SourceFile], syntax: [FileSyntax], imports: [ImportableSchema] = [], limits: SchemaLimits = SchemaLimits()) {
        self.files = files
        self.limits = limits
        self.syntax = syntax
        // The built-in packages are only looked at when named: the well-known types are
        // themselves compiled by a validator, while their static is being initialized.
        var supplied: [String: ImportableSchema] = [:]
        for imported in imports { supplied[imported.schema.packageName] = imported }
        suppliedImports = supplied
    }

    mutating func validate() -> Schema? {
        checkPackages()
        for (fileIndex, file) in syntax.enumerated() {
            for declaration in file.declarations {
                declare(declaration, parent: nil, path: [], file: fileIndex)
            }
        }
        checkImports()
        // Only this schema's own definitions; linking appends imported ones, already checked.
        for index in messageSyntax.indices { buildFields(of: index) }
        for index in messageSyntax.indices { bindPushRecipient(of: index) }
        for index in enumSyntax.indices { checkEnum(index) }
        checkEnumScopes()
        checkRecursion()
        checkFullNamesAcrossPackages()
        if !diagnostics.hasErrors { boxLargeEmbeddedMessages() }
        assignSwiftNames()
        checkTypeNameCaseCollisions()
        buildKeys()
        buildServices()
        guard !diagnostics.hasErrors else { return nil }
        return Schema(packageName: packageName, files: files, messages: messages, enums: enums, services: services, keys: keys, importedPackages: importedPackages)
    }

    /// Protobuf's type names are global: a type of this schema and one of an imported package,
    /// or of two imported packages, may not share a full name (package `a`'s nested `b.X` and
    /// package `a.b`'s `X` are both `a.b.X`): protoc refuses such a pair in one build, and the
    /// catalogue's definitions would name two types alike. Each package checks its own names.
    mutating func checkFullNamesAcrossPackages() {
        struct Declarer { let origin: Int?; let location: SourceLocation }
        var first: [String: Declarer] = [:]
        var reported = Set<String>()
        let declarations = messages.map { ($0.fullName, $0.importedFrom, $0.location) }
            + enums.map { ($0.fullName, $0.importedFrom, $0.location) }
        for (name, origin, location) in declarations {
            guard let earlier = first[name] else {
                first[name] = Declarer(origin: origin, location: location)
                continue
            }
            guard earlier.origin != origin, reported.insert(name).inserted else { continue }
            func owner(_ origin: Int?) -> String {
                origin.map { "imported package '\(importedPackages[$0].name)'" } ?? "this schema (package '\(packageName)')"
            }
            // A location in this schema's own files: an imported type's points into another's.
            let at = origin == nil ? location : earlier.origin == nil ? earlier.location : firstImportLocation()
            diagnostics.error(.duplicateTypeName, "'\(name)' is declared by \(owner(earlier.origin)) and by \(owner(origin)); protobuf's type names are global, so one of them must be renamed", at: at)
        }
    }

    /// Where this schema's first `import` is, for a clash between two imported packages.
    func firstImportLocation() -> SourceLocation {
        for file in syntax { if let imported = file.imports.first { return imported.location } }
        return SourceLocation(file: 0, offset: 0)
    }

    func describe(_ location: SourceLocation) -> String {
        let (line, column) = files[location.file].lineAndColumn(of: location.offset)
        return "\(files[location.file].path):\(line):\(column)"
    }

    // MARK: Package

    mutating func checkPackages() {
        var first: PackageSyntax?
        for (fileIndex, file) in syntax.enumerated() {
            guard let package = file.packages.first else {
                diagnostics.error(.missingPackage, "schema file has no 'package' declaration", at: SourceLocation(file: fileIndex, offset: 0))
                continue
            }
            for extra in file.packages.dropFirst() {
                diagnostics.error(.duplicatePackage, "a file declares 'package' once; this is a second declaration", at: extra.location)
            }
            for component in package.components where !isPackageComponent(component.text) {
                diagnostics.error(.invalidPackageName, "package name component '\(component.text)' must be lowercase letters, digits and '_', starting with a letter", at: component.location)
            }
            if let first {
                if first.name != package.name {
                    diagnostics.error(.conflictingPackage, "package '\(package.name)' differs from '\(first.name)' declared at \(describe(first.location)); one schema has one package", at: package.location)
                }
            } else {
                first = package
                packageName = package.name
                packageComponents = package.components.map(\.text)
            }
        }
    }

    func isPackageComponent(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    // MARK: Declarations

    mutating func declare(_ declaration: DeclarationSyntax, parent: Int?, path: [String], file: Int) {
        switch declaration {
        case let .message(message):
            let fullPath = path + [message.name.text]
            checkTypeName(message.name, kind: "message")
            warnIfBuiltInName(message.name, kind: "message", path: fullPath)
            let index = messages.count
            let isNew = register(message.name, path: fullPath, as: .message(index))
            messages.append(MessageDefinition(
                name: message.name.text, path: fullPath, fullName: qualified(fullPath), swiftName: message.name.text,
                swiftPath: fullPath.joined(separator: "."), parent: parent, fields: [], oneofs: [], nestedMessages: [],
                nestedEnums: [], reservedNumbers: [], reservedNames: [],
                isDeprecated: Self.hasAttribute("deprecated", message.attributes), documentation: message.documentation,
                file: file, location: message.name.location))
            messageSyntax.append(message)
            checkAttributes(message.attributes, allowed: Self.messageAttributes, on: "a message")
            if let parent, isNew { messages[parent].nestedMessages.append(index) }
            for member in message.members {
                if case let .declaration(inner) = member {
                    declare(inner, parent: index, path: fullPath, file: file)
                }
            }
        case let .enumeration(enumeration):
            let fullPath = path + [enumeration.name.text]
            checkTypeName(enumeration.name, kind: "enum")
            warnIfBuiltInName(enumeration.name, kind: "enum", path: fullPath)
            let index = enums.count
            let isNew = register(enumeration.name, path: fullPath, as: .enumeration(index))
            enums.append(EnumDefinition(
                name: enumeration.name.text, path: fullPath, fullName: qualified(fullPath), swiftName: enumeration.name.text,
                swiftPath: fullPath.joined(separator: "."), parent: parent, cases: [], reservedNumbers: [], reservedNames: [],
                isDeprecated: Self.hasAttribute("deprecated", enumeration.attributes), documentation: enumeration.documentation,
                file: file, location: enumeration.name.location))
            enumSyntax.append(enumeration)
            checkAttributes(enumeration.attributes, allowed: Self.enumAttributes, on: "an enum")
            if let parent, isNew { messages[parent].nestedEnums.append(index) }
        case let .service(service):
            checkTypeName(service.name, kind: "service")
            checkAttributes(service.attributes, allowed: Self.deprecationOnly, on: "a service")
            serviceSyntax.append((service, file))
        case let .errorSet(errorSet):
            checkTypeName(errorSet.name, kind: "error set")
            if let previous = errorSetSyntax[errorSet.name.text] {
                diagnostics.error(.duplicateTypeName, "error set '\(errorSet.name.text)' is already declared at \(describe(previous.name.location))", at: errorSet.name.location)
            } else {
                var checked = errorSet
                checked.cases = uniqueErrorCases(of: errorSet)
                errorSetSyntax[errorSet.name.text] = checked
            }
        case let .key(key):
            keySyntax.append(key)
        }
    }

    func qualified(_ path: [String]) -> String {
        (packageComponents + path).joined(separator: ".")
    }

    mutating func register(_ name: NameSyntax, path: [String], as reference: TypeReference) -> Bool {
        let key = path.joined(separator: ".")
        if let existing = typesByPath[key] {
            diagnostics.error(.duplicateTypeName, "'\(key)' is already declared at \(describe(location(of: existing)))", at: name.location)
            return false
        }
        typesByPath[key] = reference
        return true
    }

    func location(of reference: TypeReference) -> SourceLocation {
        switch reference {
        case let .message(index): return messages[index].location
        case let .enumeration(index): return enums[index].location
        }
    }

    /// A message's or enum's name is any protobuf identifier, as protoc takes it (`chat_message`,
    /// `Foo__Bar_`, `_Internal`): its Swift type starts uppercase and is renamed where it would
    /// collide (``SwiftNames/typeName(_:)``, `assignSwiftNames`). Services and error sets name
    /// Swift types of their own as written, so they start uppercase and end in no `_`.
    mutating func checkTypeName(_ name: NameSyntax, kind: String) {
        let text = name.text
        if kind == "message" || kind == "enum" {
            guard SwiftNames.isIdentifier(text) else {
                diagnostics.error(.invalidIdentifier, "\(kind) name '\(text)' must be letters, digits and '_', not starting with a digit", at: name.location)
                return
            }
            // Generated code declares aliases so named for top-level types that nested ones hide
            // (compared as the Swift type: `_switchboardTopLevel_X` is `_SwitchboardTopLevel_X`).
            if SwiftNames.typeName(text).hasPrefix(SwiftNames.topLevelAliasPrefix) {
                diagnostics.error(.invalidIdentifier, "\(kind) name '\(text)' starts with '\(SwiftNames.topLevelAliasPrefix)', which generated code uses for names of its own", at: name.location)
            }
            return
        }
        guard let first = text.unicodeScalars.first, ("A"..."Z").contains(first) else {
            diagnostics.error(.invalidIdentifier, "\(kind) name '\(text)' must start with an uppercase letter", at: name.location)
            return
        }
        if text.contains("__") || text.hasSuffix("_") {
            diagnostics.error(.invalidIdentifier, "\(kind) name '\(text)' must not contain '__' or end with '_' (reserved for generated names)", at: name.location)
        }
    }

    /// `message timestamp` and `message string` are protobuf names, but a field's type spelled
    /// `timestamp` or `string` alone means the built-in type (as in protoc, for the scalars).
    mutating func warnIfBuiltInName(_ name: NameSyntax, kind: String, path: [String]) {
        guard ScalarType(rawValue: name.text) != nil || name.text == "timestamp" else { return }
        diagnostics.warning(.duplicateTypeName, "\(kind) '\(name.text)' has the name of a built-in type, which a field's type '\(name.text)' always means; name this \(kind) '\(qualified(path))'", at: name.location)
    }

    /// Generated files are named after top-level types' Swift names; names equal up to case
    /// would clash on case-insensitive file systems (macOS, Windows). Runs once Swift names are
    /// chosen: a name made uppercase (`foo`) is already renamed around the others.
    mutating func checkTypeNameCaseCollisions() {
        var seen: [String: (name: String, swiftName: String, location: SourceLocation)] = [:]
        var topLevel: [(name: String, swiftName: String, location: SourceLocation)] = []
        for index in messageSyntax.indices where messages[index].parent == nil {
            topLevel.append((name: messages[index].name, swiftName: messages[index].swiftName, location: messages[index].location))
        }
        for index in enumSyntax.indices where enums[index].parent == nil {
            topLevel.append((name: enums[index].name, swiftName: enums[index].swiftName, location: enums[index].location))
        }
        for (name, swiftName, location) in topLevel.sorted(by: { $0.location < $1.location }) {
            let key = swiftName.lowercased()
            if let previous = seen[key] {
                // The same name twice is reported as a duplicate, and the same Swift name (`Data`
                // is `DataMessage`, as is `DataMessage`) where Swift paths are compared.
                if previous.name == name || previous.swiftName == swiftName { continue }
                let shown = swiftName == name ? "'\(name)'" : "'\(name)' (Swift '\(swiftName)')"
                diagnostics.error(.typeNameCaseCollision, "type \(shown) differs only in case from the type at \(describe(previous.location)); their generated files would collide on case-insensitive file systems", at: location)
            } else {
                seen[key] = (name, swiftName, location)
            }
        }
    }

    // MARK: Attributes

    /// `@pushPayload(userId)`: the message is a push payload for the user the field names.
    mutating func bindPushRecipient(of index: Int) {
        guard let attribute = messageSyntax[index].attributes.first(where: { $0.name.text == "pushPayload" }),
              attribute.arguments.count == 1, attribute.arguments[0].kind == .identifier else { return }
        let name = attribute.arguments[0]
        let message = messages[index]
        guard let field = message.fields.firstIndex(where: { $0.name == name.text && $0.oneof == nil }) else {
            var text = "'@pushPayload' names '\(name.text)', which is not a field of \(message.name) outside a oneof"
            if let suggestion = Parser.suggest(name.text, among: message.fields.map(\.name)) { text += "; did you mean '\(suggestion)'?" }
            diagnostics.error(.invalidPushPayload, text, at: name.location)
            return
        }
        guard case let .singular(.scalar(scalar)) = message.fields[field].shape, scalar != .bool, scalar != .float, scalar != .double else {
            diagnostics.error(.invalidPushPayload, "the recipient '\(name.text)' must be a string, bytes or integer field, not optional", at: name.location)
            return
        }
        messages[index].pushRecipientField = field
    }

    /// Static: a debug build copies the whole validator for each non-mutating call from a
    /// mutating one, and this one is made three times a field.
    static func hasAttribute(_ name: String, _ attributes: [AttributeSyntax]) -> Bool {
        attributes.contains { $0.name.text == name }
    }

    /// Every attribute the language has, and those each kind of declaration takes: built
    /// once, where a set literal at each call was built (and its strings hashed) per field.
    static let fieldAttributes: Set<String> = ["deprecated", "sensitive", "unpacked", "jsonName"]
    static let messageAttributes: Set<String> = ["deprecated", "pushPayload"]
    static let enumAttributes: Set<String> = ["deprecated", "allowAlias"]
    /// Enum cases, services and rpcs.
    static let deprecationOnly: Set<String> = ["deprecated"]
    static let knownAttributes = fieldAttributes.union(messageAttributes).union(enumAttributes).union(deprecationOnly)

    mutating func checkAttributes(_ attributes: [AttributeSyntax], allowed: Set<String>, on what: String) {
        let known = Self.knownAttributes
        for attribute in attributes {
            if !known.contains(attribute.name.text) {
                var message = "unknown attribute '@\(attribute.name.text)'"
                if let suggestion = Parser.suggest(attribute.name.text, among: Array(known).sorted()) {
                    message += "; did you mean '@\(suggestion)'?"
                }
                diagnostics.error(.unknownAttribute, message, at: attribute.name.location)
            } else if !allowed.contains(attribute.name.text) {
                diagnostics.error(.misplacedAttribute, "'@\(attribute.name.text)' cannot be applied to \(what)", at: attribute.name.location)
            } else if attribute.name.text == "jsonName" {
                if attribute.arguments.count != 1 || attribute.arguments[0].kind != .string {
                    diagnostics.error(.misplacedAttribute, "'@jsonName' takes one string: @jsonName(\"name\")", at: attribute.name.location)
                }
            } else if attribute.name.text == "pushPayload" {
                if attribute.arguments.count != 1 || attribute.arguments[0].kind != .identifier {
                    diagnostics.error(.invalidPushPayload, "'@pushPayload' names the field with the recipient's user id: @pushPayload(userId)", at: attribute.name.location)
                }
            } else if !attribute.arguments.isEmpty {
                diagnostics.error(.misplacedAttribute, "'@\(attribute.name.text)' takes no arguments", at: attribute.name.location)
            }
        }
    }
}
