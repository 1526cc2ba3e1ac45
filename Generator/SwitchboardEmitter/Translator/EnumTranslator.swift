import SwitchboardSchema

/// Translates one schema enum into an open Swift enum conforming to `ProtoEnum`.
struct EnumTranslator {
    let mapping: SwiftTypeMapping
    let access: String
    let index: Int

    var definition: EnumDefinition { mapping.schema.enums[index] }

    func declaration() -> SwiftTypeDeclaration {
        // One Swift case per value; an alias is a static property naming its value's case.
        let distinct = definition.distinctCases
        var members: [SwiftDeclaration] = distinct.map { item in
            var lines = item.documentation
            if item.isDeprecated { lines += (lines.isEmpty ? [] : [""]) + ["- Note: Deprecated in the schema."] }
            return .enumCase(SwiftEnumCase(documentation: lines, name: item.swiftName))
        }
        for item in definition.cases {
            guard let target = item.aliasOf else { continue }
            var lines = item.documentation.isEmpty ? ["Another name for ``\(SwiftNames.unescaped(definition.cases[target].swiftName))`` (the same value)."] : item.documentation
            if item.isDeprecated { lines += ["", "- Note: Deprecated in the schema."] }
            members.append(.property(SwiftProperty(
                documentation: lines, access: access, isStatic: true, isLet: true, name: item.swiftName,
                type: definition.swiftName, initializer: ".\(definition.cases[target].swiftName)")))
        }
        members.append(.enumCase(SwiftEnumCase(
            documentation: ["A value this version of the schema does not name; kept so it survives re-encoding."],
            name: "unrecognized", associatedType: "Int32")))

        let zero = distinct.first { $0.value == 0 }?.swiftName ?? distinct[0].swiftName
        members.append(.function(SwiftFunction(
            documentation: ["The zero value, protobuf's default."], access: access, signature: "init()",
            body: [.line("self = .\(zero)")])))

        var fromRaw: [CodeLine] = distinct.map { .line("case \($0.value): self = .\($0.swiftName)") }
        fromRaw.append(.line("default: self = .unrecognized(rawValue)"))
        members.append(.function(SwiftFunction(
            documentation: ["The case for `rawValue`; numbers the schema does not name become `unrecognized`."],
            access: access, signature: "init(rawValue: Int32)", body: [.block("switch rawValue", fromRaw)])))

        var toRaw: [CodeLine] = distinct.map { .line("case .\($0.swiftName): return \($0.value)") }
        toRaw.append(.line("case let .unrecognized(value): return value"))
        members.append(.property(SwiftProperty(
            documentation: ["The number written on the wire."], access: access, name: "rawValue", type: "Int32",
            getter: [.block("switch self", toRaw)])))

        var toName: [CodeLine] = distinct.map { .line("case .\($0.swiftName): return \"\($0.name)\"") }
        toName.append(.line("case .unrecognized: return nil"))
        members.append(.property(SwiftProperty(
            documentation: ["The schema name, which JSON uses."], access: access, name: "protoName", type: "StaticString?",
            getter: [.block("switch self", toName)])))

        var fromName: [CodeLine] = []
        for (position, item) in definition.cases.enumerated() {
            // An alias reads as its value's case.
            let target = item.aliasOf.map { definition.cases[$0].swiftName } ?? item.swiftName
            fromName.append(.line("\(position == 0 ? "if" : "} else if") name.matches(\"\(item.name)\") {"))
            fromName.append(.line("    self = .\(target)"))
        }
        fromName.append(.line("} else {"))
        fromName.append(.line("    return nil"))
        fromName.append(.line("}"))
        members.append(.function(SwiftFunction(
            documentation: ["The case whose schema name is `name`, or `nil`."], access: access,
            signature: "init?(protoName name: JSONName)", body: fromName)))

        members.append(.property(SwiftProperty(
            documentation: ["Every case the schema names."], access: access, isStatic: true, isLet: true,
            name: "allCases", type: "[\(definition.swiftName)]",
            initializer: "[" + distinct.map { ".\($0.swiftName)" }.joined(separator: ", ") + "]")))

        var documentation = definition.documentation
        if definition.isDeprecated { documentation += (documentation.isEmpty ? [] : [""]) + ["- Note: Deprecated in the schema."] }
        return SwiftTypeDeclaration(
            kind: .enum, documentation: documentation, access: access, name: definition.swiftName,
            conformances: ["ProtoEnum", "CaseIterable"], members: members)
    }
}
