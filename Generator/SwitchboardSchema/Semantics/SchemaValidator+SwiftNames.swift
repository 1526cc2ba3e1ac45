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
        renameTypeCollisions()
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
                generated.append((messages[index].swiftPath + "." + oneof.swiftTypeName, SwiftNames.typeName(oneof.name), "oneof '\(oneof.name)'", oneof.location))
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

    /// A type's Swift name starts uppercase (`message chat` is `Chat`, ``SwiftNames/typeName(_:)``).
    /// Type names that Swift reserves or generated code uses get the kind as a suffix:
    /// `enum Type` becomes `TypeEnum`, `message Data` (or `data`) becomes `DataMessage`.
    mutating func typeSwiftName(_ name: String, location: SourceLocation, kind: String) -> String {
        let base = SwiftNames.typeName(name)
        let renamed = base + SwiftNames.uppercaseFirst(kind)
        let shown = base == name ? "'\(name)'" : "'\(name)' (Swift '\(base)')"
        if SwiftNames.renamedKeywords.contains(base) || SwiftNames.escapableKeywords.contains(base) {
            diagnostics.warning(.swiftKeyword, "\(kind) name \(shown) is a Swift keyword; it is generated as '\(renamed)'", at: location)
            return renamed
        }
        if SwiftNames.reservedTypeNames.contains(base) {
            diagnostics.warning(.generatedMemberCollision, "\(kind) name \(shown) would shadow a type generated code uses; it is generated as '\(renamed)'", at: location)
            return renamed
        }
        return base
    }

    /// A message or enum whose name starts lowercase (after any underscores) is generated with
    /// that letter uppercase (`foo` as `Foo`, `_bar` as `_Bar`), a name protobuf tells from the
    /// schema's own `Foo` but Swift does not. Where its Swift scope has that name already (a type
    /// named as written, a oneof's enum, at the top level a key's or service's generated type,
    /// or a name equal up to case, whose file would be the same one on case-insensitive file
    /// systems) it takes its kind as a suffix (`FooMessage`), then underscores until the name is
    /// free; a warning says so. So does a type, or a oneof's enum, with no letter after its
    /// underscores (`_1`, `__`), where a property generated code declares has that name (a
    /// field `_1` is `_1`, one `__` is `__` and keeps a message in `___`): in code inside a
    /// message, the property would hide the type. Other collisions are reported where Swift
    /// paths are compared, as before.
    mutating func renameTypeCollisions() {
        // A generated type is one of these: its Swift scope is the enclosing message (`nil` at
        // the top level).
        enum Kind { case message, enumeration, oneof(Int) }
        // Scope → Swift names taken there; at the top level, lowercased.
        var taken: [Int?: Set<String>] = [:]
        func takenKey(_ name: String, _ scope: Int?) -> String { scope == nil ? name.lowercased() : name }
        // Every property generated messages declare (fields, oneofs, the private `_<name>` a
        // field outside a oneof may keep its value in). None starts with an uppercase letter.
        var members = Set<String>()
        var movable: [(kind: Kind, index: Int, location: SourceLocation)] = []
        for index in messageSyntax.indices {
            let message = messages[index]
            if SwiftNames.typeName(message.name) != message.name || Self.canMeetMembers(message.swiftName) {
                movable.append((kind: .message, index: index, location: message.location))
            } else {
                taken[message.parent, default: []].insert(takenKey(message.swiftName, message.parent))
            }
            for field in message.fields {
                members.insert(SwiftNames.unescaped(field.swiftName))
                if field.oneof == nil { members.insert(Self.storageName(field.swiftName)) }
            }
            for (position, oneof) in message.oneofs.enumerated() {
                members.insert(SwiftNames.unescaped(oneof.swiftName))
                if Self.canMeetMembers(oneof.swiftTypeName) {
                    movable.append((kind: .oneof(position), index: index, location: oneof.location))
                } else {
                    taken[index, default: []].insert(oneof.swiftTypeName)
                }
            }
        }
        for index in enumSyntax.indices {
            let definition = enums[index]
            if SwiftNames.typeName(definition.name) != definition.name || Self.canMeetMembers(definition.swiftName) {
                movable.append((kind: .enumeration, index: index, location: definition.location))
            } else {
                taken[definition.parent, default: []].insert(takenKey(definition.swiftName, definition.parent))
            }
        }
        guard !movable.isEmpty else { return }
        for key in keySyntax { taken[nil, default: []].insert(SwiftNames.uppercaseFirst(key.name.text).lowercased()) }
        for (service, _) in serviceSyntax {
            for generated in generatedTypeNames(forService: service.name.text) { taken[nil, default: []].insert(generated.lowercased()) }
        }
        // For each renamed name (as `taken` keys it, in its scope), the underscores its last
        // renaming took: the next one goes on from there, as `assignMemberNames` does (thousands
        // of types one name up to case each walked every earlier one's underscores, cubic work).
        var underscoresTaken: [String: Int] = [:]
        for (kind, index, location) in movable.sorted(by: { $0.location < $1.location }) {
            let target: (scope: Int?, wanted: String, label: String, suffix: String)
            switch kind {
            case .message:
                target = (messages[index].parent, messages[index].swiftName, "message '\(messages[index].name)'", "Message")
            case .enumeration:
                target = (enums[index].parent, enums[index].swiftName, "enum '\(enums[index].name)'", "Enum")
            case let .oneof(position):
                let oneof = messages[index].oneofs[position]
                target = (index, oneof.swiftTypeName, "oneof '\(oneof.name)'", "Oneof")
            }
            let scope = target.scope
            func isFree(_ candidate: String) -> Bool {
                taken[scope]?.contains(takenKey(candidate, scope)) != true && !members.contains(candidate)
            }
            var chosen = target.wanted
            if !isFree(chosen) {
                if !chosen.hasSuffix(target.suffix) { chosen += target.suffix }
                // Names before the last renaming's were taken then, and `taken` only grows.
                let resumeKey = (scope.map { "\($0)" } ?? "-") + "/" + takenKey(chosen, scope)
                var underscores = underscoresTaken[resumeKey] ?? 0
                let base = chosen
                chosen = base + String(repeating: "_", count: underscores)
                while !isFree(chosen) {
                    underscores += 1
                    chosen = base + String(repeating: "_", count: underscores)
                }
                underscoresTaken[resumeKey] = underscores
                if members.contains(target.wanted) {
                    diagnostics.warning(.generatedMemberCollision, "\(target.label) would be generated as the type '\(target.wanted)', the name of a property generated code declares; it is generated as '\(chosen)'", at: location)
                } else {
                    diagnostics.warning(.typeNameCaseCollision, "\(target.label) would be generated as the type '\(target.wanted)', which a type beside it has\(scope == nil ? " (up to case)" : ""); it is generated as '\(chosen)'", at: location)
                }
            }
            taken[scope, default: []].insert(takenKey(chosen, scope))
            switch kind {
            case .message: messages[index].swiftName = chosen
            case .enumeration: enums[index].swiftName = chosen
            case let .oneof(position): messages[index].oneofs[position].swiftTypeName = chosen
            }
        }
    }

    /// Whether a type's Swift name has no letter after its leading underscores (`_1`, `__`),
    /// so a property (which starts lowercase, or with `_` before a digit or of underscores
    /// alone) may have it too.
    static func canMeetMembers(_ swiftName: String) -> Bool {
        guard let first = swiftName.first(where: { $0 != "_" }) else { return true }
        return !first.isLetter
    }

    mutating func assignMemberNames(messageIndex: Int) {
        var taken = Set<String>()
        // Names declared twice are reported as duplicates already; the later ones get no Swift
        // name (thousands of `a` fields each walked the underscores of every earlier one).
        var declared = Set<String>()
        // For each name that collided, the name its last collision was given: the next one
        // goes on from there rather than trying every underscore again from the start.
        var lastRenamed: [String: String] = [:]
        // Taken out while names are set: a debug build (what `swift run` makes) copies the
        // whole message, every array and string in it retained, at each read of
        // `messages[messageIndex].fields[index]`.
        var fields = messages[messageIndex].fields
        var oneofs = messages[messageIndex].oneofs
        messages[messageIndex].fields = []
        messages[messageIndex].oneofs = []
        defer {
            messages[messageIndex].fields = fields
            messages[messageIndex].oneofs = oneofs
        }
        var pending: [(location: SourceLocation, isOneof: Bool, index: Int)] = fields.indices.map { (fields[$0].location, false, $0) }
            + oneofs.indices.map { (oneofs[$0].location, true, $0) }
        pending.sort { $0.location < $1.location }
        for (_, isOneof, index) in pending {
            let original = isOneof ? oneofs[index].name : fields[index].name
            guard declared.insert(original).inserted else { continue }
            // Diagnostics about a name point at the name, not at the field's key.
            let location = isOneof ? oneofs[index].location : fields[index].nameLocation ?? fields[index].location
            var swiftName = SwiftNames.propertyName(original)
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
            // A field outside a oneof may keep its value in a private `_<name>` (a message
            // field's presence, a box): no member may take that name, nor this field one taken so.
            // Only names of underscores alone (`_` is `__`) can meet another's.
            let hasStorage = !isOneof && fields[index].oneof == nil
            func isTaken(_ name: String) -> Bool {
                taken.contains(name) || (hasStorage && taken.contains(Self.storageName(name)))
            }
            if isTaken(swiftName) {
                // Every name from `base` up to its last renaming is taken still: start there.
                let base = swiftName
                swiftName = lastRenamed[base] ?? base
                while isTaken(swiftName) { swiftName = SwiftNames.appendingUnderscore(swiftName) }
                lastRenamed[base] = swiftName
            }
            taken.insert(swiftName)
            if hasStorage { taken.insert(Self.storageName(swiftName)) }
            if isOneof {
                oneofs[index].swiftName = swiftName
                // The oneof's enum lives in the message, so a reserved name would hide that type
                // from the message's own code (`oneof data` and its `Data` fields).
                let typeName = SwiftNames.typeName(original)
                if SwiftNames.isReservedTypeName(typeName) {
                    diagnostics.warning(.generatedMemberCollision, "oneof '\(original)' would generate the type '\(typeName)', which Swift or generated code already uses; it is generated as '\(typeName)Oneof'", at: location)
                    oneofs[index].swiftTypeName = typeName + "Oneof"
                }
            } else {
                fields[index].swiftName = swiftName
            }
        }
    }

    /// The private property generated code keeps a field's value in, where it keeps one
    /// (the emitter's `storageName`): `_` and the name without backticks.
    static func storageName(_ swiftName: String) -> String {
        "_" + SwiftNames.unescaped(swiftName)
    }

    mutating func assignCaseNames(enumIndex: Int) {
        var taken: [String: String] = [:]
        // As for fields: a collision goes on from the name the last one of its name was given.
        var lastRenamed: [String: String] = [:]
        for index in enums[enumIndex].cases.indices {
            let item = enums[enumIndex].cases[index]
            var swiftName = SwiftNames.enumCaseName(item.name, enumName: enums[enumIndex].name)
            if let first = swiftName.first, first.isNumber { swiftName = SwiftNames.enumCaseName(item.name, enumName: "") }
            // `_1` (protobuf drops the underscore) is still a number: Swift needs it back.
            if let first = swiftName.first, first.isNumber { swiftName = "_" + swiftName }
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
