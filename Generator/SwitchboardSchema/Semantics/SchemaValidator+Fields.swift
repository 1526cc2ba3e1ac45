extension SchemaValidator {
    /// Resolves every field of a message and checks keys, names, reserved entries and oneofs.
    mutating func buildFields(of messageIndex: Int) {
        let syntax = messageSyntax[messageIndex]
        let path = messages[messageIndex].path
        var fields: [FieldDefinition] = []
        var oneofs: [OneofDefinition] = []

        // Reserved entries first, so fields can be checked against them.
        var reservedRanges: [(ClosedRange<Int>, SourceLocation)] = []
        var reservedNames: [String: SourceLocation] = [:]
        for case let .reserved(reserved) in syntax.members {
            collectReserved(reserved, ranges: &reservedRanges, names: &reservedNames, maximum: ProtobufLimits.maximumFieldNumber, what: "field key")
        }
        messages[messageIndex].reservedNumbers = reservedRanges.map(\.0)
        messages[messageIndex].reservedNames = reservedNames.keys.sorted()

        for member in syntax.members {
            switch member {
            case let .field(field):
                if let definition = makeField(field, scope: path, oneof: nil) { fields.append(definition) }
            case let .oneof(oneof):
                let oneofIndex = oneofs.count
                var memberIndices: [Int] = []
                // Any protobuf identifier, as a field's name (`Choice`, `kind_`, `_`): its Swift
                // property is made as a field's, its enum is the name with a capital first.
                if !SwiftNames.isIdentifier(oneof.name.text) {
                    diagnostics.error(.invalidIdentifier, "oneof name '\(oneof.name.text)' must be letters, digits and '_', not starting with a digit", at: oneof.name.location)
                }
                if oneof.fields.isEmpty {
                    diagnostics.error(.emptyOneof, "oneof '\(oneof.name.text)' has no fields", at: oneof.name.location)
                }
                for field in oneof.fields {
                    guard var definition = makeField(field, scope: path, oneof: oneofIndex) else { continue }
                    switch definition.shape {
                    case let .singular(type):
                        definition.shape = .singular(type)
                    case .optional:
                        diagnostics.error(.invalidOneofField, "oneof field '\(field.name.text)' cannot be optional; a oneof case is already either set or not", at: field.type.location)
                        continue
                    case .list, .map:
                        diagnostics.error(.invalidOneofField, "oneof field '\(field.name.text)' cannot be a list or map; wrap it in a message", at: field.type.location)
                        continue
                    }
                    memberIndices.append(fields.count)
                    fields.append(definition)
                }
                oneofs.append(OneofDefinition(
                    name: oneof.name.text, swiftName: oneof.name.text, swiftTypeName: SwiftNames.typeName(oneof.name.text),
                    fields: memberIndices, documentation: oneof.documentation, location: oneof.name.location))
            case .reserved, .declaration:
                break
            }
        }

        // Keys: range, protobuf's band, duplicates, reserved.
        // The first field of each key: its name and place, all a duplicate's error needs
        // (a whole definition per entry cost a debug build about a sixth of this function's time).
        var keys: [Int: (name: String, location: SourceLocation)] = [:]
        for field in fields {
            let number = field.number
            if number < 1 || number > ProtobufLimits.maximumFieldNumber {
                diagnostics.error(.fieldKeyOutOfRange, "field key \(number) of '\(field.name)' is out of range; keys run from 1 to \(ProtobufLimits.maximumFieldNumber)", at: field.location)
                continue
            }
            if ProtobufLimits.reservedFieldNumbers.contains(number) {
                diagnostics.error(.fieldKeyInProtobufRange, "field key \(number) of '\(field.name)' is in 19000...19999, which protobuf reserves for itself", at: field.location)
            }
            if let previous = keys[number] {
                diagnostics.error(.duplicateFieldKey, "field key \(number) of '\(field.name)' is already used by '\(previous.name)' at \(describe(previous.location))", at: field.location)
            } else {
                keys[number] = (field.name, field.location)
            }
            if let (range, location) = reservedRanges.first(where: { $0.0.contains(number) }) {
                let shown = range.count == 1 ? "\(range.lowerBound)" : "\(range.lowerBound) to \(range.upperBound)"
                diagnostics.error(.reservedKeyUsed, "field key \(number) of '\(field.name)' is reserved (reserved \(shown) at \(describe(location)))", at: field.location)
            }
        }

        // Names: duplicates (fields and oneofs share the property namespace), JSON names, reserved names.
        var names: [String: SourceLocation] = [:]
        // By UTF-8 bytes, as protoc and every codec compare names: `é` and `e` + U+0301 are
        // one Swift `String` but two JSON names.
        var jsonNames: [[UInt8]: String] = [:]
        // protoc's proto3 rule, stricter than JSON names: field names must differ once
        // lowercased without underscores (`default` and `Default`, `foo_bar` and `fooBar`).
        var foldedNames: [String: String] = [:]
        let jsonNameOf = Dictionary(fields.map { ($0.name, $0.jsonName) }, uniquingKeysWith: { first, _ in first })
        let fieldNames = Set(fields.map(\.name))
        let namedMembers = fields.map { ($0.name, $0.location, true) } + oneofs.map { ($0.name, $0.location, false) }
        for (name, location, isField) in namedMembers.sorted(by: { $0.1 < $1.1 }) {
            if let previous = names[name] {
                diagnostics.error(.duplicateFieldName, "'\(name)' is already declared at \(describe(previous))", at: location)
                continue
            }
            names[name] = location
            if let reserved = reservedNames[name] {
                diagnostics.error(.reservedNameUsed, "name '\(name)' is reserved (at \(describe(reserved)))", at: location)
            }
            guard isField else { continue }
            let json = jsonNameOf[name] ?? SwiftNames.jsonName(name)
            let folded = String(name.lowercased().filter { $0 != "_" })
            if let other = foldedNames[folded], other != name, jsonNames[Array(json.utf8)] == nil {
                diagnostics.error(.jsonNameCollision, "'\(name)' and '\(other)' are one name to protobuf once lowercased without underscores ('\(folded)'), which protoc refuses in proto3", at: location)
                continue
            }
            foldedNames[folded] = foldedNames[folded] ?? name
            if let other = jsonNames[Array(json.utf8)], other != name {
                diagnostics.error(.jsonNameCollision, "'\(name)' and '\(other)' have the same JSON name '\(json)'", at: location)
            } else if json != name, fieldNames.contains(json) {
                // JSON input may use either name: one spelling must not name two fields.
                diagnostics.error(.jsonNameCollision, "the JSON name '\(json)' of '\(name)' is the name of another field", at: location)
            } else {
                jsonNames[Array(json.utf8)] = name
            }
        }

        // A oneof becomes a nested Swift enum; its name must not clash with nested types.
        var nestedTypeNames: [String: SourceLocation] = [:]
        for index in messages[messageIndex].nestedMessages { nestedTypeNames[messages[index].name] = messages[index].location }
        for index in messages[messageIndex].nestedEnums { nestedTypeNames[enums[index].name] = enums[index].location }
        for oneof in oneofs {
            if let clash = nestedTypeNames[oneof.swiftTypeName] {
                diagnostics.error(.oneofTypeCollision, "oneof '\(oneof.name)' generates the Swift type '\(oneof.swiftTypeName)', which clashes with the type declared at \(describe(clash))", at: oneof.location)
            }
            nestedTypeNames[oneof.swiftTypeName] = oneof.location
        }

        messages[messageIndex].fields = fields
        messages[messageIndex].oneofs = oneofs
    }

    mutating func collectReserved(
        _ reserved: ReservedSyntax,
        ranges: inout [(ClosedRange<Int>, SourceLocation)],
        names: inout [String: SourceLocation],
        maximum: Int,
        what: String
    ) {
        let minimum = what == "field key" ? 1 : Int(Int32.min)
        for item in reserved.items {
            // Each entry is checked against the others and each key against every entry.
            guard ranges.count + names.count < limits.maximumReservedEntries else {
                diagnostics.error(.invalidReservedRange, "more than \(limits.maximumReservedEntries) reserved entries in one declaration; reserve ranges ('20 to 29') instead", at: reserved.location)
                return
            }
            var range: ClosedRange<Int>?
            var location = reserved.location
            switch item {
            case let .keys(low, high):
                location = low.location
                guard let lowValue = low.value else { continue }
                let highValue = high.map { $0.value } ?? lowValue
                guard let highValue else { continue }
                if lowValue > highValue {
                    diagnostics.error(.invalidReservedRange, "reserved range \(lowValue) to \(highValue) is empty; its start must not exceed its end", at: low.location)
                    continue
                }
                guard lowValue >= Int64(minimum), highValue <= Int64(maximum) else {
                    diagnostics.error(.fieldKeyOutOfRange, "reserved \(what) \(lowValue < Int64(minimum) ? lowValue : highValue) is out of range \(minimum)...\(maximum)", at: low.location)
                    continue
                }
                range = Int(lowValue)...Int(highValue)
            case let .keysToMax(low):
                location = low.location
                guard let lowValue = low.value else { continue }
                guard lowValue >= Int64(minimum), lowValue <= Int64(maximum) else {
                    diagnostics.error(.fieldKeyOutOfRange, "reserved \(what) \(lowValue) is out of range \(minimum)...\(maximum)", at: low.location)
                    continue
                }
                range = Int(lowValue)...maximum
            case let .name(name):
                if let previous = names[name.text] {
                    diagnostics.error(.overlappingReserved, "name '\(name.text)' is already reserved at \(describe(previous))", at: name.location)
                } else {
                    names[name.text] = name.location
                }
            }
            if let range {
                if let (other, otherLocation) = ranges.first(where: { $0.0.overlaps(range) }) {
                    diagnostics.error(.overlappingReserved, "reserved \(range.lowerBound)...\(range.upperBound) overlaps \(other.lowerBound)...\(other.upperBound) reserved at \(describe(otherLocation))", at: location)
                } else {
                    ranges.append((range, location))
                }
            }
        }
    }

    /// A field's name: any protobuf identifier (`[A-Za-z_][A-Za-z0-9_]*`), so a real `.proto`
    /// world's names (`Leading_Capital`, `double__underscore`, `trailing_`, `__2`, `_`) carry
    /// over; the Swift name is made idiomatic and collision-free, the JSON name is protobuf's.
    mutating func checkFieldName(_ name: NameSyntax) {
        guard SwiftNames.isIdentifier(name.text) else {
            diagnostics.error(.invalidIdentifier, "field name '\(name.text)' must be letters, digits and '_', not starting with a digit", at: name.location)
            return
        }
    }

    mutating func checkMemberName(_ name: NameSyntax, kind: String) {
        let text = name.text
        guard let first = text.unicodeScalars.first, ("a"..."z").contains(first) else {
            diagnostics.error(.invalidIdentifier, "\(kind) name '\(text)' must start with a lowercase letter", at: name.location)
            return
        }
        if text.contains("__") || text.hasSuffix("_") {
            diagnostics.error(.invalidIdentifier, "\(kind) name '\(text)' must not contain '__' or end with '_' (reserved for generated names)", at: name.location)
        }
    }

    mutating func makeField(_ field: FieldSyntax, scope: [String], oneof: Int?) -> FieldDefinition? {
        checkFieldName(field.name)
        checkAttributes(field.attributes, allowed: Self.fieldAttributes, on: "a field")
        var jsonName = SwiftNames.jsonName(field.name.text)
        if let attribute = field.attributes.first(where: { $0.name.text == "jsonName" }), attribute.arguments.count == 1,
           attribute.arguments[0].kind == .string {
            let custom = attribute.arguments[0].text
            // Any text protoc takes as a `json_name` (quotes, backslashes, non-ASCII), escaped
            // where it is written, but for what generated code's table of member names cannot hold.
            if let problem = SwiftNames.jsonNameProblem(custom) {
                diagnostics.error(.invalidIdentifier, "JSON name '\(custom)' \(problem): generated code lists a message's JSON names in one string, separated by spaces and tabs", at: attribute.arguments[0].location)
            } else {
                jsonName = custom
            }
        } else if jsonName.isEmpty {
            // `_` (any name of underscores alone): protobuf's JSON name for it is empty.
            diagnostics.error(.invalidIdentifier, "field '\(field.name.text)' has an empty JSON name (protobuf drops underscores), which generated code cannot look up in its table of member names; give it one with @jsonName(\"...\")", at: field.name.location)
        }
        guard let key = field.key.value else { return nil }
        // An unresolved type is already reported; keep the field so its key and name are still checked.
        let resolved = resolveShape(field.type, scope: scope)
        let shape = resolved ?? .singular(.scalar(.bytes))
        let number = Int(clamping: key)
        let isUnpacked = Self.hasAttribute("unpacked", field.attributes)
        var isPackable = false
        if case let .list(type) = shape { isPackable = type.isPackable }
        if isUnpacked, resolved != nil, !isPackable, let attribute = field.attributes.first(where: { $0.name.text == "unpacked" }) {
            diagnostics.error(.misplacedAttribute, "'@unpacked' applies only to a list of numbers, bools or enums (the lists protobuf packs)", at: attribute.name.location)
        }
        return FieldDefinition(
            name: field.name.text, swiftName: field.name.text, jsonName: jsonName,
            number: number, shape: shape, oneof: oneof, isIndirect: false,
            isSensitive: Self.hasAttribute("sensitive", field.attributes), isDeprecated: Self.hasAttribute("deprecated", field.attributes),
            documentation: field.documentation, location: field.key.location, nameLocation: field.name.location,
            isUnpacked: isUnpacked)
    }

    // MARK: Types

    mutating func resolveShape(_ type: TypeSyntax, scope: [String]) -> FieldShape? {
        switch type {
        case .named:
            return resolveValue(type, scope: scope).map(FieldShape.singular)
        case let .optional(inner, location):
            switch inner {
            case .named: return resolveValue(inner, scope: scope).map(FieldShape.optional)
            case .list, .map:
                diagnostics.error(.optionalCollection, "a list or map cannot be optional; an empty one already means absent", at: location)
                return nil
            case .optional:
                return nil
            }
        case let .list(element, _):
            switch element {
            case .named: return resolveValue(element, scope: scope).map(FieldShape.list)
            case let .optional(_, location):
                diagnostics.error(.optionalCollection, "list elements cannot be optional; protobuf lists have no holes", at: location)
                return nil
            case let .list(_, location), let .map(_, _, location):
                diagnostics.error(.nestedCollection, "a list cannot hold lists or maps directly; wrap the inner collection in a message", at: location)
                return nil
            }
        case let .map(key, value, _):
            var keyScalar: ScalarType?
            if case let .named(components, argument, location) = key, components.count == 1,
               let scalar = ScalarType(rawValue: components[0].text), argument == nil {
                if scalar.isValidMapKey {
                    keyScalar = scalar
                } else {
                    diagnostics.error(.invalidMapKey, "'\(scalar.rawValue)' cannot be a map key; use an integer type, bool or string", at: location)
                }
            } else {
                diagnostics.error(.invalidMapKey, "map keys must be an integer type, bool or string", at: key.location)
            }
            var valueType: ValueType?
            switch value {
            case .named: valueType = resolveValue(value, scope: scope)
            case let .optional(_, location):
                diagnostics.error(.optionalCollection, "map values cannot be optional", at: location)
            case let .list(_, location), let .map(_, _, location):
                diagnostics.error(.nestedCollection, "a map cannot hold lists or maps directly; wrap the inner collection in a message", at: location)
            }
            guard let keyScalar, let valueType else { return nil }
            return .map(key: keyScalar, value: valueType)
        }
    }

    mutating func resolveValue(_ type: TypeSyntax, scope: [String]) -> ValueType? {
        guard case let .named(components, argument, location) = type else { return nil }
        let names = components.map(\.text)
        if names.count == 1, let scalar = ScalarType(rawValue: names[0]) {
            if let argument {
                diagnostics.error(.unknownTimestampEncoding, "'\(scalar.rawValue)' takes no argument; found '(\(argument.text))'", at: argument.location)
            }
            return .scalar(scalar)
        }
        if names == ["timestamp"] {
            guard let argument else { return wellKnownTimestamp() }
            switch argument.text {
            case "millis": return .timestamp(.millis)
            case "wellKnown": return wellKnownTimestamp()
            default:
                diagnostics.error(.unknownTimestampEncoding, "unknown timestamp encoding '\(argument.text)'; use 'timestamp' (google.protobuf.Timestamp) or 'timestamp(millis)'", at: argument.location)
                return nil
            }
        }
        var relative = names
        if relative.count > packageComponents.count, Array(relative.prefix(packageComponents.count)) == packageComponents {
            relative.removeFirst(packageComponents.count)
        }
        // Innermost scope first, as protobuf resolves names.
        var candidates: [[String]] = []
        for depth in stride(from: scope.count, through: 0, by: -1) {
            candidates.append(Array(scope.prefix(depth)) + names)
        }
        if relative != names { candidates.append(relative) }
        for candidate in candidates {
            if let reference = typesByPath[candidate.joined(separator: ".")] {
                if argument != nil {
                    diagnostics.error(.unknownTimestampEncoding, "type '\(names.joined(separator: "."))' takes no argument", at: location)
                }
                switch reference {
                case let .message(index): return .message(index)
                case let .enumeration(index): return .enumeration(index)
                }
            }
        }
        if let imported = resolveImported(names, file: location.file, location: location) {
            if imported != nil, argument != nil {
                diagnostics.error(.unknownTimestampEncoding, "type '\(names.joined(separator: "."))' takes no argument", at: location)
            }
            return imported
        }
        let spelled = names.joined(separator: ".")
        var message = "unknown type '\(spelled)'"
        if takeSuggestion(), let suggestion = Parser.suggest(spelled, among: ScalarType.allCases.map(\.rawValue) + ["timestamp"] + typesByPath.keys.sorted()) {
            message += "; did you mean '\(suggestion)'?"
        }
        diagnostics.error(.unknownType, message, at: location)
        return nil
    }
}
