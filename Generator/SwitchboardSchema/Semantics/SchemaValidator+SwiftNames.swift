extension SchemaValidator {
    /// Chooses Swift names: escapes keywords, renames collisions with generated members
    /// and with types generated code uses. Each change is reported as a warning.
    mutating func assignSwiftNames() {
        // Imported definitions keep the names their own package gave them.
        for index in messageSyntax.indices {
            let name = messages[index].name
            let swiftName = typeSwiftName(name, location: messages[index].location, kind: "message")
            messages[index].swiftName = swiftName
            assignMemberNames(messageIndex: index)
        }
        for index in enumSyntax.indices {
            enums[index].swiftName = typeSwiftName(enums[index].name, location: enums[index].location, kind: "enum")
            assignCaseNames(enumIndex: index)
        }
        for index in messageSyntax.indices { messages[index].swiftPath = swiftPath(parent: messages[index].parent, name: messages[index].swiftName) }
        for index in enumSyntax.indices { enums[index].swiftPath = swiftPath(parent: enums[index].parent, name: enums[index].swiftName) }
        // A renamed type (`Data` becomes `DataMessage`) may land on a name the schema uses;
        // so may a oneof's enum. Each entry: its Swift path, the name it has in the schema's
        // own terms (equal names in one scope are reported as duplicates already), how to
        // call it, where it is.
        var declared: [String: (name: String, label: String, location: SourceLocation)] = [:]
        var generated = messageSyntax.indices.map { (messages[$0].swiftPath, messages[$0].name, "'\(messages[$0].name)'", messages[$0].location) }
            + enumSyntax.indices.map { (enums[$0].swiftPath, enums[$0].name, "'\(enums[$0].name)'", enums[$0].location) }
        for index in messageSyntax.indices {
            for oneof in messages[index].oneofs {
                generated.append((messages[index].swiftPath + "." + oneof.swiftTypeName, SwiftNames.uppercaseFirst(oneof.name), "oneof '\(oneof.name)'", oneof.location))
            }
        }
        for (path, name, label, location) in generated.sorted(by: { $0.3 < $1.3 }) {
            if let other = declared[path], other.name != name {
                diagnostics.error(.duplicateTypeName, "\(label) is generated as the Swift type '\(path)', as \(other.label) at \(describe(other.location)) is; rename one of them", at: location)
            } else if declared[path] == nil {
                declared[path] = (name, label, location)
            }
        }
    }

    func swiftPath(parent: Int?, name: String) -> String {
        guard let parent else { return name }
        return swiftPath(parent: messages[parent].parent, name: messages[parent].swiftName) + "." + name
    }

    /// Type names that Swift reserves or generated code uses get the kind as a suffix:
    /// `enum Type` becomes `TypeEnum`, `message Data` becomes `DataMessage`.
    mutating func typeSwiftName(_ name: String, location: SourceLocation, kind: String) -> String {
        let renamed = name + SwiftNames.uppercaseFirst(kind)
        if SwiftNames.renamedKeywords.contains(name) || SwiftNames.escapableKeywords.contains(name) {
            diagnostics.warning(.swiftKeyword, "\(kind) name '\(name)' is a Swift keyword; it is generated as '\(renamed)'", at: location)
            return renamed
        }
        if SwiftNames.reservedTypeNames.contains(name) {
            diagnostics.warning(.generatedMemberCollision, "\(kind) name '\(name)' would shadow a type generated code uses; it is generated as '\(renamed)'", at: location)
            return renamed
        }
        return name
    }

    mutating func assignMemberNames(messageIndex: Int) {
        var taken = Set<String>()
        // Names declared twice are reported as duplicates already; the later ones get no Swift
        // name (thousands of `a` fields each walked the underscores of every earlier one).
        var declared = Set<String>()
        // For each name that collided, the name its last collision was given: the next one
        // goes on from there rather than trying every underscore again from the start.
        var lastRenamed: [String: String] = [:]
        var pending: [(isOneof: Bool, index: Int)] = messages[messageIndex].fields.indices.map { (false, $0) }
            + messages[messageIndex].oneofs.indices.map { (true, $0) }
        pending.sort { lhs, rhs in
            let l = lhs.isOneof ? messages[messageIndex].oneofs[lhs.index].location : messages[messageIndex].fields[lhs.index].location
            let r = rhs.isOneof ? messages[messageIndex].oneofs[rhs.index].location : messages[messageIndex].fields[rhs.index].location
            return l < r
        }
        for (isOneof, index) in pending {
            let original = isOneof ? messages[messageIndex].oneofs[index].name : messages[messageIndex].fields[index].name
            guard declared.insert(original).inserted else { continue }
            // Diagnostics about a name point at the name, not at the field's key.
            let location = isOneof ? messages[messageIndex].oneofs[index].location
                : messages[messageIndex].fields[index].nameLocation ?? messages[messageIndex].fields[index].location
            var swiftName = isOneof ? SwiftNames.jsonName(original) : SwiftNames.propertyName(original)
            if SwiftNames.renamedKeywords.contains(swiftName) {
                diagnostics.warning(.swiftKeyword, "'\(original)' is a Swift keyword that cannot be escaped; it is generated as '\(swiftName)_'", at: location)
                swiftName += "_"
            } else if SwiftNames.escapableKeywords.contains(swiftName) {
                diagnostics.warning(.swiftKeyword, "'\(original)' is a Swift keyword; it is generated as `\(swiftName)`", at: location)
                swiftName = "`\(swiftName)`"
            } else if SwiftNames.messageMembers.contains(swiftName) {
                diagnostics.warning(.generatedMemberCollision, "'\(original)' collides with a member every message has; it is generated as '\(swiftName)_'", at: location)
                swiftName += "_"
            }
            if taken.contains(swiftName) {
                // Every name from `base` up to its last renaming is taken still: start there.
                let base = swiftName
                swiftName = lastRenamed[base] ?? base
                while taken.contains(swiftName) { swiftName = SwiftNames.appendingUnderscore(swiftName) }
                lastRenamed[base] = swiftName
            }
            taken.insert(swiftName)
            if isOneof {
                messages[messageIndex].oneofs[index].swiftName = swiftName
                // The oneof's enum lives in the message, so a reserved name would hide that type
                // from the message's own code (`oneof data` and its `Data` fields).
                let typeName = SwiftNames.uppercaseFirst(original)
                if SwiftNames.isReservedTypeName(typeName) {
                    diagnostics.warning(.generatedMemberCollision, "oneof '\(original)' would generate the type '\(typeName)', which Swift or generated code already uses; it is generated as '\(typeName)Oneof'", at: location)
                    messages[messageIndex].oneofs[index].swiftTypeName = typeName + "Oneof"
                }
            } else {
                messages[messageIndex].fields[index].swiftName = swiftName
            }
        }
    }

    mutating func assignCaseNames(enumIndex: Int) {
        var taken: [String: String] = [:]
        // As for fields: a collision goes on from the name the last one of its name was given.
        var lastRenamed: [String: String] = [:]
        for index in enums[enumIndex].cases.indices {
            let item = enums[enumIndex].cases[index]
            var swiftName = SwiftNames.enumCaseName(item.name, enumName: enums[enumIndex].name)
            if let first = swiftName.first, first.isNumber { swiftName = SwiftNames.enumCaseName(item.name, enumName: "") }
            if SwiftNames.renamedKeywords.contains(swiftName) || SwiftNames.enumMembers.contains(swiftName) {
                diagnostics.warning(.generatedMemberCollision, "enum case '\(item.name)' collides with a Swift keyword or a member every enum has; it is generated as '\(swiftName)_'", at: item.location)
                swiftName += "_"
            } else if SwiftNames.escapableKeywords.contains(swiftName) {
                diagnostics.warning(.swiftKeyword, "enum case '\(item.name)' is a Swift keyword; it is generated as `\(swiftName)`", at: item.location)
                swiftName = "`\(swiftName)`"
            }
            if let other = taken[swiftName] {
                // The same name twice is reported where names are checked.
                if other == item.name { continue }
                // Protobuf names are case-sensitive (`MOO` and `moo` may both exist); Swift
                // names must differ, so the later one takes an underscore.
                let original = swiftName
                swiftName = lastRenamed[original] ?? original
                while taken[swiftName] != nil { swiftName = SwiftNames.appendingUnderscore(swiftName) }
                lastRenamed[original] = swiftName
                diagnostics.warning(.duplicateEnumCase, "enum cases '\(other)' and '\(item.name)' both become the Swift case '\(original)'; '\(item.name)' is generated as '\(swiftName)'", at: item.location)
            }
            taken[swiftName] = item.name
            enums[enumIndex].cases[index].swiftName = swiftName
        }
    }
}
