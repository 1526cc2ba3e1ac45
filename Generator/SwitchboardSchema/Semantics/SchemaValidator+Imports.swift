extension SchemaValidator {
    /// The names of the packages this schema may import.
    var importableNames: [String] { (Array(suppliedImports.keys) + [WellKnownTypes.packageName]).sorted() }

    /// The package `name`: one the caller supplied, or the built-in well-known types.
    func importable(_ name: String) -> ImportableSchema? {
        if let supplied = suppliedImports[name] { return supplied }
        guard name == WellKnownTypes.packageName else { return nil }
        return ImportableSchema(schema: WellKnownTypes.schema, swiftModule: WellKnownTypes.swiftModule)
    }

    /// Checks each file's `import` lines: a package that exists, other than the schema's own,
    /// imported once.
    mutating func checkImports() {
        for file in syntax {
            var seen: Set<String> = []
            for imported in file.imports {
                if imported.name == packageName {
                    diagnostics.error(.invalidImport, "a schema does not import its own package '\(imported.name)'", at: imported.location)
                } else if importable(imported.name) == nil {
                    var message = "unknown package '\(imported.name)'"
                    if let suggestion = Parser.suggest(imported.name, among: importableNames) {
                        message += "; did you mean '\(suggestion)'?"
                    } else {
                        message += "; pass its schema directory with --import-path"
                    }
                    diagnostics.error(.invalidImport, message, at: imported.location)
                } else if !seen.insert(imported.name).inserted {
                    diagnostics.warning(.invalidImport, "package '\(imported.name)' is already imported", at: imported.location)
                }
            }
        }
    }

    /// Appends an imported package's own messages and enums (once), after linking the packages
    /// it imports in turn, so each definition sits in the schema once whoever imports it.
    /// Returns false when the package is unknown.
    @discardableResult
    mutating func link(_ name: String) -> Bool {
        if linkedPackages.contains(name) { return true }
        guard let imported = importable(name) else { return false }
        linkedPackages.insert(name)
        let package = imported.schema
        for dependency in package.importedPackages { link(dependency.name) }
        let packageIndex = importedPackages.count
        importedPackages.append(ImportedPackage(name: name, swiftModule: imported.swiftModule))

        // Where each of the package's definitions lands here: its own ones appended, the ones
        // it imported found among those already linked.
        var messageIndex: [Int] = []
        var appended = messages.count
        for message in package.messages {
            if message.importedFrom == nil {
                messageIndex.append(appended)
                appended += 1
            } else if case let .message(index)? = importedTypesByFullName[message.fullName] {
                messageIndex.append(index)
            } else {
                preconditionFailure("imported package \(name) refers to \(message.fullName), which no linked package declares")
            }
        }
        var enumIndex: [Int] = []
        appended = enums.count
        for definition in package.enums {
            if definition.importedFrom == nil {
                enumIndex.append(appended)
                appended += 1
            } else if case let .enumeration(index)? = importedTypesByFullName[definition.fullName] {
                enumIndex.append(index)
            } else {
                preconditionFailure("imported package \(name) refers to \(definition.fullName), which no linked package declares")
            }
        }
        func renumber(_ type: ValueType) -> ValueType {
            switch type {
            case let .message(index): return .message(messageIndex[index])
            case let .enumeration(index): return .enumeration(enumIndex[index])
            case .scalar, .timestamp: return type
            }
        }
        for var message in package.messages where message.importedFrom == nil {
            message.parent = message.parent.map { messageIndex[$0] }
            message.nestedMessages = message.nestedMessages.map { messageIndex[$0] }
            message.nestedEnums = message.nestedEnums.map { enumIndex[$0] }
            message.importedFrom = packageIndex
            for index in message.fields.indices {
                switch message.fields[index].shape {
                case let .singular(type): message.fields[index].shape = .singular(renumber(type))
                case let .optional(type): message.fields[index].shape = .optional(renumber(type))
                case let .list(type): message.fields[index].shape = .list(renumber(type))
                case let .map(key, value): message.fields[index].shape = .map(key: key, value: renumber(value))
                }
            }
            importedTypesByFullName[message.fullName] = .message(messages.count)
            messages.append(message)
        }
        for var definition in package.enums where definition.importedFrom == nil {
            definition.parent = definition.parent.map { messageIndex[$0] }
            definition.importedFrom = packageIndex
            importedTypesByFullName[definition.fullName] = .enumeration(enums.count)
            enums.append(definition)
        }
        return true
    }

    /// `google.protobuf.Timestamp`, which `timestamp` names without an import.
    mutating func wellKnownTimestamp() -> ValueType {
        link(WellKnownTypes.packageName)
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
            guard link(imported.name) else { continue }
            switch importedTypesByFullName[fullName] {
            case let .message(index)? where messages[index].importedFrom.map({ importedPackages[$0].name }) == imported.name:
                return .some(.message(index))
            case let .enumeration(index)? where enums[index].importedFrom.map({ importedPackages[$0].name }) == imported.name:
                return .some(.enumeration(index))
            default: continue
            }
        }
        for name in importableNames where fullName.hasPrefix(name + ".") {
            guard let package = importable(name) else { continue }
            let declares = package.schema.messages.contains { $0.fullName == fullName && $0.importedFrom == nil }
                || package.schema.enums.contains { $0.fullName == fullName && $0.importedFrom == nil }
            if declares {
                diagnostics.error(.unknownType, "'\(fullName)' is in package '\(name)'; add 'import \(name)' to this file", at: location)
                return .some(nil)
            }
        }
        return nil
    }
}
