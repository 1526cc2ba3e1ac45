import SwitchboardSchema

/// Translates one message into its struct and its `ProtoMessage` conformance.
final class MessageTranslator {
    let mapping: SwiftTypeMapping
    let access: String
    let index: Int
    /// Held, not looked up per use: a debug build copies the schema and the message (every
    /// array and string in them retained) at each `schema.messages[index]`.
    let message: MessageDefinition

    var schema: Schema { mapping.schema }

    init(mapping: SwiftTypeMapping, access: String, index: Int) {
        self.mapping = mapping
        self.access = access
        self.index = index
        message = mapping.schema.messages[index]
    }

    /// The struct declaration, with oneof enums as members.
    func structDeclaration() -> SwiftTypeDeclaration {
        var members: [SwiftDeclaration] = []
        // Member names a presence accessor must not take, gathered once for the message.
        let taken = Set(message.fields.map(\.swiftName) + message.oneofs.map(\.swiftName))
        for field in message.fields where field.oneof == nil {
            members.append(contentsOf: property(for: field, taken: taken))
        }
        for oneof in message.oneofs {
            members.append(.property(SwiftProperty(
                documentation: oneof.documentation + (oneof.documentation.isEmpty ? [] : [""]) + ["Exactly one of these cases, or `nil` when none is set."],
                access: access, name: oneof.swiftName, type: "\(oneof.swiftTypeName)?", initializer: "nil")))
        }
        members.append(.property(SwiftProperty(
            documentation: ["Fields this version of the schema does not know, kept so re-encoding loses nothing."],
            access: access, name: "unknownFields", initializer: "UnknownFields()")))
        for oneof in message.oneofs {
            members.append(.type(oneofEnum(oneof)))
        }
        members.append(.function(SwiftFunction(
            documentation: ["Creates a message with every field at its default."], access: access, signature: "init()", body: [])))
        if !message.fields.isEmpty { members.append(.function(initializer())) }
        // `==` compares exactly the stored properties declared above, so it always agrees with
        // the derived `hash(into:)`, which hashes them.
        let stored = members.compactMap { member -> String? in
            guard case let .property(property) = member, !property.isStatic, property.getter == nil else { return nil }
            return property.name
        }
        members.append(.function(equality(comparing: stored)))
        return SwiftTypeDeclaration(
            kind: .struct, documentation: documentation(message.documentation, deprecated: message.isDeprecated),
            access: access, name: message.swiftName, conformances: ["Sendable", "Hashable"], members: members)
    }

    func documentation(_ lines: [String], deprecated: Bool) -> [String] {
        deprecated ? lines + (lines.isEmpty ? [] : [""]) + ["- Note: Deprecated in the schema."] : lines
    }

    func fieldDocumentation(_ field: FieldDefinition) -> [String] {
        var lines = field.documentation
        if field.isSensitive { lines += (lines.isEmpty ? [] : [""]) + ["- Note: Sensitive; redacted from descriptions and logs."] }
        return documentation(lines, deprecated: field.isDeprecated)
    }

    /// `hasX` and `clearX` for a field `x` that tracks presence.
    func presenceAccessorNames(_ field: FieldDefinition) -> (has: String, clear: String) {
        let name = SwiftNames.uppercaseFirst(SwiftNames.unescaped(field.swiftName))
        return ("has" + name, "clear" + name)
    }

    /// The property of `field`; `taken` holds the message's field and oneof names.
    func property(for field: FieldDefinition, taken: Set<String>) -> [SwiftDeclaration] {
        let type = mapping.fieldType(field.shape, from: index)
        let storage = storageName(field)
        let valueType = mapping.valueType(field.shape.valueType, from: index)
        if field.tracksPresence {
            // A message field reads as its default when unset, yet keeps whether it was set,
            // as protobuf does: set to an empty message, it is written (as an empty message).
            // A field that closes a cycle keeps its message in a box, made on read.
            var declarations: [SwiftDeclaration] = [
                .property(SwiftProperty(
                    documentation: fieldDocumentation(field), access: access, name: field.swiftName, type: type,
                    getter: [.line(field.isIndirect ? "\(storage)?.value ?? \(valueType)()" : "\(storage) ?? \(valueType)()")],
                    setter: [.line(field.isIndirect ? "\(storage) = IndirectBox(newValue)" : "\(storage) = newValue")])),
                .property(SwiftProperty(
                    access: "private", name: storage, type: field.isIndirect ? "IndirectBox<\(valueType)>?" : "\(valueType)?",
                    initializer: "nil")),
            ]
            // Presence, as swift-protobuf offers it: whether the field was set (an empty message
            // sent is not one never sent), and unsetting it. Left out if a member has the name.
            let (has, clear) = presenceAccessorNames(field)
            if !taken.contains(has) {
                declarations.append(.property(SwiftProperty(
                    documentation: ["Whether `\(SwiftNames.unescaped(field.swiftName))` is set (decoded or assigned), even to an empty message."],
                    access: access, name: has, type: "Bool", getter: [.line("\(storage) != nil")])))
            }
            if !taken.contains(clear) {
                declarations.append(.function(SwiftFunction(
                    documentation: ["Unsets `\(SwiftNames.unescaped(field.swiftName))`: it reads as its default and is not written."],
                    access: access, signature: "mutating func \(clear)()", body: [.line("\(storage) = nil")])))
            }
            return declarations
        }
        guard field.isIndirect else {
            return [.property(SwiftProperty(
                documentation: fieldDocumentation(field), access: access, name: field.swiftName, type: type,
                initializer: mapping.defaultValue(field.shape, from: index)))]
        }
        // Other recursive fields (optional ones) live in an immutable box; the property hides it.
        return [
            .property(SwiftProperty(
                documentation: fieldDocumentation(field), access: access, name: field.swiftName, type: type,
                getter: [.line("\(storage)?.value")],
                setter: [.line("\(storage) = newValue.map { IndirectBox($0) }")])),
            .property(SwiftProperty(access: "private", name: storage, type: "IndirectBox<\(valueType)>?", initializer: "nil")),
        ]
    }

    /// For a message field that tracks presence: its message when set, as an optional.
    func presentValue(_ field: FieldDefinition) -> String {
        field.isIndirect ? "(self.\(storageName(field))?.value)" : "self.\(storageName(field))"
    }

    func storageName(_ field: FieldDefinition) -> String {
        "_" + field.swiftName.filter { $0 != "`" }
    }

    func oneofEnum(_ oneof: OneofDefinition) -> SwiftTypeDeclaration {
        var cases: [SwiftDeclaration] = []
        for fieldIndex in oneof.fields {
            let field = message.fields[fieldIndex]
            cases.append(.enumCase(SwiftEnumCase(
                documentation: fieldDocumentation(field), isIndirect: field.isIndirect, name: field.swiftName,
                associatedType: mapping.valueType(field.shape.valueType, from: index))))
        }
        return SwiftTypeDeclaration(
            kind: .enum, documentation: oneof.documentation.isEmpty ? ["The cases of the `\(oneof.name)` oneof."] : oneof.documentation,
            access: access, name: oneof.swiftTypeName, conformances: ["Sendable", "Hashable"], members: cases)
    }

    func initializer() -> SwiftFunction {
        var parameters: [String] = []
        var body: [CodeLine] = []
        for field in message.fields where field.oneof == nil {
            parameters.append("\(field.swiftName): \(mapping.parameterType(field, from: index)) = \(mapping.parameterDefault(field, from: index))")
            if field.tracksPresence {
                // Only a message passed in is set: the default leaves the field unset.
                let storage = storageName(field)
                body.append(.line(field.isIndirect ? "self.\(storage) = \(field.swiftName).map { IndirectBox($0) }" : "self.\(storage) = \(field.swiftName)"))
            } else {
                body.append(.line("self.\(field.swiftName) = \(field.swiftName)"))
            }
        }
        for oneof in message.oneofs {
            parameters.append("\(oneof.swiftName): \(oneof.swiftTypeName)? = nil")
            body.append(.line("self.\(oneof.swiftName) = \(oneof.swiftName)"))
        }
        return SwiftFunction(
            documentation: ["Creates a message from field values; omitted fields take their defaults."],
            access: access, signature: parameters.isEmpty ? "init()" : "init", parameters: parameters,
            body: body)
    }

    /// `==` written out, property by property, through ``FieldEquality``: the `==` Swift
    /// derives took most of the module's type-checking time (about 16 ms a message of ten
    /// fields, against 2 ms). `hash(into:)` stays derived, which is cheap to check.
    func equality(comparing storedProperties: [String]) -> SwiftFunction {
        SwiftFunction(
            documentation: ["Whether every field, and every unknown field kept, is equal."],
            access: access, signature: "static func == (lhs: Self, rhs: Self) -> Bool",
            body: storedProperties.map { .line("guard FieldEquality.equal(lhs.\($0), rhs.\($0)) else { return false }") }
                + [.line("return true")])
    }

    // MARK: Redaction

    /// For messages with `@sensitive` fields: descriptions, `dump` and `Mirror` that never
    /// show those values. Other messages keep Swift's defaults, which call into these for
    /// nested messages.
    func redactedDescription() -> SwiftTypeDeclaration? {
        guard message.fields.contains(where: \.isSensitive) else { return nil }
        var lines: [CodeLine] = [.line("var parts: [String] = []")]
        var children: [String] = []
        for field in message.fields where field.oneof == nil {
            let label = field.swiftName.filter { $0 != "`" }
            if field.isSensitive {
                lines.append(.line("parts.append(\"\(label): [REDACTED]\")"))
                children.append("(label: \"\(label)\", value: \"[REDACTED]\")")
            } else {
                // A message field shows whether it was set, and a recursive one never builds
                // the endless chain of defaults a self-containing message implies.
                let access = field.tracksPresence ? presentValue(field) : "self.\(field.swiftName)"
                lines.append(.line("parts.append(\"\(label): \\(String(reflecting: \(access)))\")"))
                children.append("(label: \"\(label)\", value: \(access) as Any)")
            }
        }
        for oneof in message.oneofs {
            let redacted = oneof.fields.contains { message.fields[$0].isSensitive }
            lines.append(.line(redacted
                ? "parts.append(\"\(oneof.swiftName): \\(self.\(oneof.swiftName) == nil ? \"nil\" : \"[REDACTED]\")\")"
                : "parts.append(\"\(oneof.swiftName): \\(String(reflecting: self.\(oneof.swiftName)))\")"))
            children.append(redacted
                ? "(label: \"\(oneof.swiftName)\", value: self.\(oneof.swiftName) == nil ? \"nil\" : \"[REDACTED]\")"
                : "(label: \"\(oneof.swiftName)\", value: self.\(oneof.swiftName) as Any)")
        }
        lines.append(.line("return \"\(message.swiftName)(\" + parts.joined(separator: \", \") + \")\""))
        let mirror: [CodeLine] = [
            .line("let children: [(label: String?, value: Any)] = ["),
        ] + children.map { CodeLine.line("    \($0),") } + [
            .line("]"),
            .line("return Mirror(self, children: children, displayStyle: .struct)"),
        ]
        return SwiftTypeDeclaration(
            kind: .extension, name: message.swiftPath, conformances: ["CustomStringConvertible", "CustomDebugStringConvertible", "CustomReflectable"],
            members: [
                .property(SwiftProperty(documentation: ["The fields, with `@sensitive` values redacted."], access: access, name: "description", type: "String", getter: lines)),
                .property(SwiftProperty(access: access, name: "debugDescription", type: "String", getter: [.line("description")])),
                .property(SwiftProperty(documentation: ["What `dump` and `Mirror` see: `@sensitive` values redacted."], access: access, name: "customMirror", type: "Mirror", getter: mirror)),
            ])
    }

    // MARK: ProtoMessage conformance

    func conformance() -> SwiftTypeDeclaration {
        var names: [SwiftDeclaration] = [.property(SwiftProperty(
            documentation: ["The fully qualified schema name."], access: access, isStatic: true, isLet: true,
            name: "protoMessageName", initializer: "\"\(message.fullName)\""))]
        if !message.fields.isEmpty {
            names.append(.property(SwiftProperty(
                documentation: ["The member names of this message's JSON object."], access: access, isStatic: true, isLet: true,
                name: "jsonFieldNames", initializer: "JSONFieldNames(message: protoMessageName, fields: \"\(jsonFieldNamesLiteral())\")")))
        }
        return SwiftTypeDeclaration(
            kind: .extension, name: message.swiftPath, conformances: ["ProtoMessage"],
            members: names + [
                .function(SwiftFunction(access: access, signature: "func serializedSize() -> Int", body: sizeBody())),
                .function(SwiftFunction(access: access, signature: "func serialize(into writer: inout WireWriter)", body: serializeBody())),
                .function(SwiftFunction(
                    access: access, signature: "mutating func decodeFields(from reader: inout WireReader) throws(WireDecodingError)",
                    body: decodeBody())),
                .function(SwiftFunction(
                    access: access, signature: "func encodeJSONFields(into writer: inout JSONWriter) throws(JSONEncodingError)",
                    body: encodeJSONBody())),
                .function(SwiftFunction(
                    access: access, signature: "mutating func decodeJSONFields(from reader: inout JSONReader) throws(JSONDecodingError)",
                    body: decodeJSONBody())),
            ])
    }

    /// `@pushPayload(field)`: the message names the user it is for.
    func pushPayloadConformance() -> SwiftTypeDeclaration? {
        guard let index = message.pushRecipientField else { return nil }
        let field = message.fields[index]
        return SwiftTypeDeclaration(
            kind: .extension, name: message.swiftPath, conformances: ["PushPayload"],
            members: [.property(SwiftProperty(
                documentation: ["The user this payload is for: `\(field.swiftName)`."], access: access, name: "recipientID",
                type: mapping.valueType(field.shape.valueType, from: index), getter: [.line("\(field.swiftName)")]))])
    }

    /// The oneof property of `field`, as `self.<name>` so schema names never clash with locals.
    func oneofName(_ field: FieldDefinition) -> String? {
        field.oneof.map { "self." + message.oneofs[$0].swiftName }
    }

    // MARK: Size

    func sizeBody() -> [CodeLine] {
        var lines: [CodeLine] = [.line("var size = WireSizeSum(unknownFields.count)")]
        for field in message.fieldsByNumber {
            if let oneof = oneofName(field) {
                let codec = mapping.codec(field.shape.valueType, from: index)
                lines.append(.block("if case let .\(field.swiftName)(value)? = \(oneof)", [
                    .line("size.add(\(codec).encodedSize(of: value), tagSize: \(SwiftTypeMapping.tagSize(number: field.number)))"),
                ]))
            } else {
                lines.append(contentsOf: sizeLines(field))
            }
        }
        if lines.count == 1 { return [.line("unknownFields.count")] }
        lines.append(.line("return size.total"))
        return lines
    }

    /// The size pass adds through ``WireSizeSum`` methods, never `+=`: operators are what the
    /// type checker and a debug build spend most on in this body.
    func sizeLines(_ field: FieldDefinition) -> [CodeLine] {
        let name = "self." + field.swiftName
        let tagSize = SwiftTypeMapping.tagSize(number: field.number)
        switch field.shape {
        case let .singular(type):
            if field.tracksPresence {
                return [.line("if let length = \(presentValue(field))?.serializedSize() { size.add(WireSize.lengthDelimited(length), tagSize: \(tagSize)) }")]
            }
            return [.line("\(mapping.codec(type, from: index)).addSize(of: \(name), tagSize: \(tagSize), to: &size)")]
        case let .optional(type):
            if case .message = type {
                // Optional chaining borrows the message in place; `if let` would copy it.
                return [.line("if let length = \(name)?.serializedSize() { size.add(WireSize.lengthDelimited(length), tagSize: \(tagSize)) }")]
            }
            let codec = mapping.codec(type, from: index)
            // `map` borrows the value; binding it with `if let` would retain it.
            return [.line("if let length = \(name).map(\(codec).encodedSize) { size.add(length, tagSize: \(tagSize)) }")]
        case let .list(type):
            let codec = mapping.codec(type, from: index)
            let method = field.isPacked ? "packedSize" : "unpackedSize"
            return [.line("size.add(RepeatedField<\(codec)>.\(method)(\(name), tagSize: \(tagSize)))")]
        case let .map(key, value):
            return [.line("size.add(MapField<\(SwiftTypeMapping.codec(key)), \(mapping.codec(value, from: index))>.encodedSize(\(name), tagSize: \(tagSize)))")]
        }
    }

    // MARK: Serialize

    func writeTag(_ number: Int, _ wireType: UInt32) -> String {
        let literal = SwiftTypeMapping.tagLiteral(number: number, wireType: wireType)
        return UInt32(number) << 3 | wireType < 0x80 ? "writer.writeByte(\(literal))" : "writer.writeTag(\(literal))"
    }

    func serializeBody() -> [CodeLine] {
        var lines: [CodeLine] = []
        for field in message.fieldsByNumber {
            let type = field.shape.valueType
            let tag = writeTag(field.number, SwiftTypeMapping.wireType(type))
            if let oneof = oneofName(field) {
                lines.append(.block("if case let .\(field.swiftName)(value)? = \(oneof)", [
                    .line(tag),
                    .line("\(mapping.codec(type, from: index)).write(value, to: &writer)"),
                ]))
                continue
            }
            let name = "self." + field.swiftName
            switch field.shape {
            case let .singular(type):
                if field.tracksPresence {
                    // `map` borrows the message; `writeLengthDelimited` sizes it as it writes.
                    lines.append(.block("_ = \(presentValue(field)).map", [
                        .line(tag),
                        .line("writer.writeLengthDelimited($0)"),
                    ]))
                } else {
                    let tagValue = SwiftTypeMapping.tagLiteral(number: field.number, wireType: SwiftTypeMapping.wireType(type))
                    lines.append(.line("\(mapping.codec(type, from: index)).writeField(\(name), tag: \(tagValue), to: &writer)"))
                }
            case let .optional(type):
                if case .message = type {
                    lines.append(.block("_ = \(name).map", [
                        .line(tag),
                        .line("writer.writeLengthDelimited($0)"),
                    ]))
                } else {
                    // `map` borrows the value; binding it with `if let` would copy it.
                    lines.append(.block("_ = \(name).map", [
                        .line(tag),
                        .line("\(mapping.codec(type, from: index)).write($0, to: &writer)"),
                    ]))
                }
            case let .list(type):
                let codec = mapping.codec(type, from: index)
                if field.isPacked {
                    let packed = SwiftTypeMapping.tagLiteral(number: field.number, wireType: 2)
                    lines.append(.line("RepeatedField<\(codec)>.writePacked(\(name), tag: \(packed), to: &writer)"))
                } else {
                    let tagValue = SwiftTypeMapping.tagLiteral(number: field.number, wireType: SwiftTypeMapping.wireType(type))
                    lines.append(.line("RepeatedField<\(codec)>.writeUnpacked(\(name), tag: \(tagValue), to: &writer)"))
                }
            case let .map(key, value):
                let tagValue = SwiftTypeMapping.tagLiteral(number: field.number, wireType: 2)
                lines.append(.line("MapField<\(SwiftTypeMapping.codec(key)), \(mapping.codec(value, from: index))>.write(\(name), tag: \(tagValue), to: &writer)"))
            }
        }
        lines.append(.line("unknownFields.write(to: &writer)"))
        return lines
    }

    // MARK: Decode

    func decodeBody() -> [CodeLine] {
        var cases: [CodeLine] = []
        for field in message.fieldsByNumber {
            let type = field.shape.valueType
            let codec = mapping.codec(type, from: index)
            let tag = SwiftTypeMapping.tagLiteral(number: field.number, wireType: SwiftTypeMapping.wireType(type))
            let name = "self." + field.swiftName
            if let oneof = oneofName(field) {
                if case let .message(target) = type {
                    let typeName = mapping.valueType(.message(target), from: index)
                    // The member is taken out of the oneof before merging, so its storage is
                    // not shared and the merge is in place (linear in repeated merges).
                    cases.append(.nested("case \(tag):", [
                        .line("var value = \(typeName)()"),
                        .block("if case let .\(field.swiftName)(existing)? = \(oneof)", [
                            .line("value = existing"),
                            .line("\(oneof) = nil"),
                        ]),
                        .line("try reader.mergeMessage(into: &value)"),
                        .line("\(oneof) = .\(field.swiftName)(value)"),
                    ]))
                } else {
                    cases.append(.nested("case \(tag):", [.line("\(oneof) = .\(field.swiftName)(try \(codec).read(from: &reader))")]))
                }
                continue
            }
            switch field.shape {
            case let .singular(type):
                if case .message = type {
                    // Merged in place into what an earlier occurrence set, as protobuf merges.
                    let storage = "self." + storageName(field)
                    if field.isIndirect {
                        cases.append(.nested("case \(tag):", [.line("try reader.mergeMessage(into: &\(storage))")]))
                    } else {
                        cases.append(.nested("case \(tag):", [
                            .line("if case .none = \(storage) { \(storage) = \(mapping.valueType(type, from: index))() }"),
                            .line("try reader.mergeMessage(into: &\(storage)!)"),
                        ]))
                    }
                } else {
                    cases.append(.nested("case \(tag):", [.line("\(name) = try \(codec).read(from: &reader)")]))
                }
            case let .optional(type):
                if case .message = type {
                    // Merge in place: protobuf merges a repeated singular message.
                    if field.isIndirect {
                        cases.append(.nested("case \(tag):", [.line("try reader.mergeMessage(into: &self.\(storageName(field)))")]))
                    } else {
                        cases.append(.nested("case \(tag):", [
                            .line("if case .none = \(name) { \(name) = \(mapping.valueType(type, from: index))() }"),
                            .line("try reader.mergeMessage(into: &\(name)!)"),
                        ]))
                    }
                } else {
                    cases.append(.nested("case \(tag):", [.line("\(name) = try \(codec).read(from: &reader)")]))
                }
            case let .list(type):
                if type.isPackable {
                    let packed = SwiftTypeMapping.tagLiteral(number: field.number, wireType: 2)
                    cases.append(.nested("case \(packed):", [.line("try RepeatedField<\(codec)>.readPacked(from: &reader, into: &\(name))")]))
                }
                if type.isPackable {
                    cases.append(.nested("case \(tag):", [.line("\(name).append(try \(codec).read(from: &reader))")]))
                } else {
                    cases.append(.nested("case \(tag):", [.line("try RepeatedField<\(codec)>.readElement(from: &reader, tag: \(tag), into: &\(name))")]))
                }
            case let .map(key, value):
                let entryTag = SwiftTypeMapping.tagLiteral(number: field.number, wireType: 2)
                cases.append(.nested("case \(entryTag):", [
                    .line("try MapField<\(SwiftTypeMapping.codec(key)), \(mapping.codec(value, from: index))>.readEntry(from: &reader, into: &\(name))"),
                ]))
            }
        }
        // Unknown numbers, and known ones with the wrong wire type, are kept as unknown fields
        // (as protoc's C++ and Python code keep them) and written back on encoding.
        let fallback: [CodeLine] = [.line("try reader.skipField(tag, into: &unknownFields)")]
        cases.append(.nested("default:", fallback))
        return [.block("while let tag = try reader.nextTag()", [.block("switch tag.rawValue", cases)])]
    }

    // MARK: JSON

    /// The member name as the literal `writeKeyLiteral` takes: quotes and colon included, the
    /// name escaped as JSON (its bytes are written as they are), then as Swift.
    func jsonKeyLiteral(_ field: FieldDefinition) -> String {
        "\"" + LiteralText.swift("\"" + LiteralText.json(field.jsonName) + "\":") + "\""
    }

    /// One call per field (``FieldCodec/writeJSONMember(_:key:to:)`` and its kin), which
    /// checks for the default itself: a condition, a key and a value written out per field
    /// cost several times as much to compile.
    func encodeJSONBody() -> [CodeLine] {
        var lines: [CodeLine] = []
        for field in message.fields {
            let type = field.shape.valueType
            let codec = mapping.codec(type, from: index)
            let key = jsonKeyLiteral(field)
            if let oneof = oneofName(field) {
                let tryPrefix = SwiftTypeMapping.jsonWriteThrows(type) ? "try " : ""
                lines.append(.block("if case let .\(field.swiftName)(value)? = \(oneof)", [
                    .line("writer.writeKeyLiteral(\(key))"),
                    .line("\(tryPrefix)\(codec).writeJSON(value, to: &writer)"),
                ]))
                continue
            }
            let name = "self." + field.swiftName
            switch field.shape {
            case .singular:
                if field.tracksPresence {
                    lines.append(.line("try \(codec).writeJSONMember(present: \(presentValue(field)), key: \(key), to: &writer)"))
                } else {
                    lines.append(.line("try \(codec).writeJSONMember(\(name), key: \(key), to: &writer)"))
                }
            case .optional:
                lines.append(.line("try \(codec).writeJSONMember(present: \(name), key: \(key), to: &writer)"))
            case .list:
                lines.append(.line("try RepeatedField<\(codec)>.writeJSONMember(\(name), key: \(key), to: &writer)"))
            case let .map(keyType, _):
                lines.append(.line("try MapField<\(SwiftTypeMapping.codec(keyType)), \(codec)>.writeJSONMember(\(name), key: \(key), to: &writer)"))
            }
        }
        return lines.isEmpty ? [.line("")] : lines
    }

    /// ``JSONFieldNames``' text for this message: JSON names in field order, each followed by
    /// a tab and the schema name where that differs; escaped for a Swift literal (the names
    /// hold no space or tab, which the validator refuses).
    func jsonFieldNamesLiteral() -> String {
        message.fields.map { field -> String in
            let json = LiteralText.swift(field.jsonName)
            return field.name == field.jsonName ? json : json + "\\t" + LiteralText.swift(field.name)
        }.joined(separator: " ")
    }

    /// The runtime finds each member's field (``JSONFieldCursor``, which also refuses repeated
    /// members and handles unknown ones), so the body is one switch on field positions.
    func decodeJSONBody() -> [CodeLine] {
        var cases: [CodeLine] = []
        for (position, field) in message.fields.enumerated() {
            let type = field.shape.valueType
            let codec = mapping.codec(type, from: index)
            let name = "self." + field.swiftName
            var body: [CodeLine] = []
            if let oneof = oneofName(field), let oneofIndex = field.oneof {
                body.append(.block("if let value = try \(codec).readJSON(from: &reader)", [
                    .line("try fields.claimOneof(\(oneofIndex))"),
                    .line("\(oneof) = .\(field.swiftName)(value)"),
                ]))
            } else {
                switch field.shape {
                case .singular, .optional:
                    if field.isIndirect {
                        // Boxed storage: through the property, assigned only for a value.
                        body.append(.line("if let value = try \(codec).readJSON(from: &reader) { \(name) = value }"))
                    } else if field.tracksPresence {
                        body.append(.line("try \(codec).readJSON(from: &reader, intoOptional: &self.\(storageName(field)))"))
                    } else if case .optional = field.shape {
                        body.append(.line("try \(codec).readJSON(from: &reader, intoOptional: &\(name))"))
                    } else {
                        body.append(.line("try \(codec).readJSON(from: &reader, into: &\(name))"))
                    }
                case .list:
                    body.append(.line("try RepeatedField<\(codec)>.readJSON(from: &reader, into: &\(name))"))
                case let .map(key, _):
                    body.append(.line("try MapField<\(SwiftTypeMapping.codec(key)), \(codec)>.readJSON(from: &reader, into: &\(name))"))
                }
            }
            cases.append(.nested("case \(position):", body))
        }
        guard !cases.isEmpty else {
            return [.block("while let name = try reader.nextKey()", [
                .line("try reader.skipUnknownField(name, in: Self.protoMessageName)"),
            ])]
        }
        cases.append(.nested("default:", [.line("break")]))
        return [
            .line("var fields = JSONFieldCursor(Self.jsonFieldNames)"),
            .block("while let field = try fields.next(in: &reader)", [.block("switch field", cases)]),
        ]
    }
}
