extension SchemaValidator {
    /// Packages a schema can import, by name: today the built-in well-known types.
    static let importablePackages: [String: (schema: Schema, swiftModule: String)] = [
        WellKnownTypes.packageName: (WellKnownTypes.schema, WellKnownTypes.swiftModule),
    ]

    /// Checks each file's `import` lines: a package that exists, other than the schema's own,
    /// imported once.
    mutating func checkImports() {
        for file in syntax {
            var seen: Set<String> = []
            for imported in file.imports {
                if imported.name == packageName {
                    diagnostics.error(.invalidImport, "a schema does not import its own package '\(imported.name)'", at: imported.location)
                } else if Self.importablePackages[imported.name] == nil {
                    var message = "unknown package '\(imported.name)'"
                    if let suggestion = Parser.suggest(imported.name, among: Self.importablePackages.keys.sorted()) {
                        message += "; did you mean '\(suggestion)'?"
                    }
                    diagnostics.error(.invalidImport, message, at: imported.location)
                } else if !seen.insert(imported.name).inserted {
                    diagnostics.warning(.invalidImport, "package '\(imported.name)' is already imported", at: imported.location)
                }
            }
        }
    }

    /// Appends an imported package's messages and enums (once), renumbered to follow this
    /// schema's own. Returns where its messages and enums start.
    mutating func link(_ name: String) -> (messages: Int, enums: Int)? {
        if let linked = linkedPackages[name] { return linked }
        guard let (package, module) = Self.importablePackages[name] else { return nil }
        let offsets = (messages: messages.count, enums: enums.count)
        let packageIndex = importedPackages.count
        importedPackages.append(ImportedPackage(name: name, swiftModule: module))
        func renumber(_ type: ValueType) -> ValueType {
            switch type {
            case let .message(index): return .message(index + offsets.messages)
            case let .enumeration(index): return .enumeration(index + offsets.enums)
            case .scalar, .timestamp: return type
            }
        }
        for var message in package.messages {
            message.parent = message.parent.map { $0 + offsets.messages }
            message.nestedMessages = message.nestedMessages.map { $0 + offsets.messages }
            message.nestedEnums = message.nestedEnums.map { $0 + offsets.enums }
            message.importedFrom = packageIndex
            for index in message.fields.indices {
                switch message.fields[index].shape {
                case let .singular(type): message.fields[index].shape = .singular(renumber(type))
                case let .optional(type): message.fields[index].shape = .optional(renumber(type))
                case let .list(type): message.fields[index].shape = .list(renumber(type))
                case let .map(key, value): message.fields[index].shape = .map(key: key, value: renumber(value))
                }
            }
            messages.append(message)
        }
        for var definition in package.enums {
            definition.parent = definition.parent.map { $0 + offsets.messages }
            definition.importedFrom = packageIndex
            enums.append(definition)
        }
        for (index, message) in package.messages.enumerated() {
            importedTypesByFullName[message.fullName] = .message(index + offsets.messages)
        }
        for (index, definition) in package.enums.enumerated() {
            importedTypesByFullName[definition.fullName] = .enumeration(index + offsets.enums)
        }
        linkedPackages[name] = offsets
        return offsets
    }

    /// `google.protobuf.Timestamp`, which `timestamp` names without an import.
    mutating func wellKnownTimestamp() -> ValueType {
        _ = link(WellKnownTypes.packageName)
        guard case let .message(index) = importedTypesByFullName["google.protobuf.Timestamp"] else {
            preconditionFailure("the well-known types lack Timestamp")
        }
        return .message(index)
    }

    /// Resolves a qualified name in a package the file imports; reports a known type whose
    /// package the file forgot to import.
    mutating func resolveImported(_ names: [String], file: Int, location: SourceLocation) -> ValueType?? {
        let fullName = names.joined(separator: ".")
        for imported in syntax[file].imports where names.count > imported.components.count
            && Array(names.prefix(imported.components.count)) == imported.components.map(\.text) {
            guard link(imported.name) != nil else { continue }
            switch importedTypesByFullName[fullName] {
            case let .message(index): return .some(.message(index))
            case let .enumeration(index): return .some(.enumeration(index))
            case nil: continue
            }
        }
        for (name, package) in Self.importablePackages where fullName.hasPrefix(name + ".") {
            let declares = package.schema.messages.contains { $0.fullName == fullName } || package.schema.enums.contains { $0.fullName == fullName }
            if declares {
                diagnostics.error(.unknownType, "'\(fullName)' is in package '\(name)'; add 'import \(name)' to this file", at: location)
                return .some(nil)
            }
        }
        return nil
    }
}
