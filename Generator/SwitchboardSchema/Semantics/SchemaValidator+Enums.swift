extension SchemaValidator {
    /// Checks an enum's cases: a zero default, unique names and values, int32 range, reserved entries.
    mutating func checkEnum(_ enumIndex: Int) {
        let syntax = enumSyntax[enumIndex]
        var reservedRanges: [(ClosedRange<Int>, SourceLocation)] = []
        var reservedNames: [String: SourceLocation] = [:]
        for reserved in syntax.reserved {
            collectReserved(reserved, ranges: &reservedRanges, names: &reservedNames, maximum: Int(Int32.max), what: "enum value")
        }
        enums[enumIndex].reservedNumbers = reservedRanges.map(\.0)
        enums[enumIndex].reservedNames = reservedNames.keys.sorted()

        if syntax.cases.isEmpty {
            diagnostics.error(.emptyEnum, "enum '\(syntax.name.text)' has no cases; it needs at least the zero default", at: syntax.name.location)
            return
        }
        var cases: [EnumCaseDefinition] = []
        var byName: [String: SourceLocation] = [:]
        var byValue: [Int32: String] = [:]
        var caseIndexByValue: [Int32: Int] = [:]
        // protoc's rule for proto3: names equal once the enum's name is stripped and the rest
        // read as PascalCase must have one value (`KEYWORD_DEFAULT` and `DEFAULT` in `Keyword`).
        var byProtocName: [String: (name: String, value: Int32)] = [:]
        let allowsAlias = Self.hasAttribute("allowAlias", syntax.attributes)
        enums[enumIndex].allowsAlias = allowsAlias
        for item in syntax.cases {
            checkAttributes(item.attributes, allowed: Self.deprecationOnly, on: "an enum case")
            // Any protobuf identifier, `_UNKNOWN` too: its Swift case drops the underscores
            // (`unknown`), and one of underscores or digits alone keeps one (`__`, `_1`).
            if !SwiftNames.isIdentifier(item.name.text) {
                diagnostics.error(.invalidIdentifier, "enum case name '\(item.name.text)' must be letters, digits and '_', not starting with a digit", at: item.name.location)
            }
            if let previous = byName[item.name.text] {
                diagnostics.error(.duplicateEnumCase, "enum case '\(item.name.text)' is already declared at \(describe(previous))", at: item.name.location)
                continue
            }
            byName[item.name.text] = item.name.location
            if let reserved = reservedNames[item.name.text] {
                diagnostics.error(.reservedNameUsed, "enum case name '\(item.name.text)' is reserved (at \(describe(reserved)))", at: item.name.location)
            }
            guard let raw = item.value.value else { continue }
            guard let value = Int32(exactly: raw) else {
                diagnostics.error(.enumValueOutOfRange, "enum value \(raw) of '\(item.name.text)' does not fit in int32", at: item.value.location)
                continue
            }
            if let other = byValue[value], !allowsAlias {
                diagnostics.error(.duplicateEnumValue, "enum value \(value) of '\(item.name.text)' is already used by '\(other)'; mark the enum @allowAlias if both names are meant", at: item.value.location)
                continue
            }
            let aliasOf = caseIndexByValue[value]
            if aliasOf == nil {
                byValue[value] = item.name.text
                caseIndexByValue[value] = cases.count
            }
            if reservedRanges.contains(where: { $0.0.contains(Int(value)) }) {
                diagnostics.error(.reservedKeyUsed, "enum value \(value) of '\(item.name.text)' is reserved", at: item.value.location)
            }
            let protocName = Self.protocEnumValueKey(item.name.text, enumName: syntax.name.text)
            if let other = byProtocName[protocName], other.value != value {
                diagnostics.error(.duplicateEnumCase, "enum cases '\(other.name)' and '\(item.name.text)' are one name to protoc ('\(protocName)', without the enum's name and case), which it refuses unless they share a value", at: item.name.location)
            } else if byProtocName[protocName] == nil {
                byProtocName[protocName] = (item.name.text, value)
            }
            cases.append(EnumCaseDefinition(
                name: item.name.text, swiftName: item.name.text, value: value,
                isDeprecated: Self.hasAttribute("deprecated", item.attributes), documentation: item.documentation,
                location: item.name.location, aliasOf: aliasOf))
        }
        if allowsAlias, !cases.contains(where: { $0.aliasOf != nil }) {
            diagnostics.error(.misplacedAttribute, "enum '\(syntax.name.text)' is @allowAlias but no two of its cases share a value", at: syntax.name.location)
        }
        if byValue[0] == nil {
            diagnostics.error(.enumMissingZero, "enum '\(syntax.name.text)' has no case with value 0; the zero case is every field's default", at: syntax.name.location)
        }
        enums[enumIndex].cases = cases
    }

    /// protobuf scopes enum values like siblings of the enum, so two enums in one scope
    /// may not share a value name; rejecting it keeps `export-proto` output valid.
    mutating func checkEnumScopes() {
        // Protobuf puts an enum's cases beside the enum, in its enclosing scope: they may not
        // take the name of a type, field or oneof there either (protoc refuses the export).
        // Each scope's names and what declares them (`field`): the error names the owner,
        // whose name is the case's; no text is made for the names that never collide.
        var symbols: [Int?: [String: String]] = [:]
        for message in messages where message.importedFrom == nil {
            symbols[message.parent, default: [:]][message.name] = "message"
        }
        for definition in enums where definition.importedFrom == nil {
            symbols[definition.parent, default: [:]][definition.name] = "enum"
        }
        for (syntax, _) in serviceSyntax { symbols[nil, default: [:]][syntax.name.text] = "service" }
        for (index, message) in messages.enumerated() where message.importedFrom == nil {
            for field in message.fields { symbols[index, default: [:]][field.name] = "field" }
            for oneof in message.oneofs { symbols[index, default: [:]][oneof.name] = "oneof" }
        }
        for definition in enums where definition.importedFrom == nil {
            for item in definition.cases {
                if let owner = symbols[definition.parent]?[item.name] {
                    diagnostics.error(.enumCaseScopeCollision, "enum case '\(item.name)' of '\(definition.name)' has the name of \(owner) '\(item.name)' beside it; protobuf puts enum cases in their enum's enclosing scope", at: item.location)
                }
            }
        }
        var scopes: [Int?: [String: (enumName: String, location: SourceLocation)]] = [:]
        for definition in enums where definition.importedFrom == nil {
            for item in definition.cases {
                if let other = scopes[definition.parent]?[item.name], other.enumName != definition.name {
                    diagnostics.error(.enumCaseScopeCollision, "enum case '\(item.name)' of '\(definition.name)' clashes with the case of '\(other.enumName)' at \(describe(other.location)); protobuf gives enums in one scope a shared value namespace", at: item.location)
                } else {
                    scopes[definition.parent, default: [:]][item.name] = (definition.name, item.location)
                }
            }
        }
    }

    /// The name protoc compares enum values by: without the enum's name as a prefix (compared
    /// lowercased, underscores skipped, followed by any underscores), as PascalCase.
    static func protocEnumValueKey(_ name: String, enumName: String) -> String {
        let prefix = Array(enumName.lowercased().utf8.filter { $0 != UInt8(ascii: "_") })
        let bytes = Array(name.utf8)
        var index = 0
        var matched = 0
        while index < bytes.count && matched < prefix.count {
            if bytes[index] == UInt8(ascii: "_") {
                index += 1
                continue
            }
            guard asciiLowercase(bytes[index]) == prefix[matched] else { break }
            index += 1
            matched += 1
        }
        var rest = bytes[...]
        if matched == prefix.count {
            while index < bytes.count && bytes[index] == UInt8(ascii: "_") { index += 1 }
            if index < bytes.count { rest = bytes[index...] }
        }
        var result: [UInt8] = []
        var nextUpper = true
        for byte in rest {
            if byte == UInt8(ascii: "_") {
                nextUpper = true
            } else {
                result.append(nextUpper ? asciiUppercase(byte) : asciiLowercase(byte))
                nextUpper = false
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func asciiLowercase(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
    private static func asciiUppercase(_ byte: UInt8) -> UInt8 { (97...122).contains(byte) ? byte - 32 : byte }
}
