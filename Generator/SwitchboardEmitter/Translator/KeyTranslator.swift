import SwitchboardSchema

/// Translates `key` declarations into credential types that know their header.
struct KeyTranslator {
    let access: String

    func declarations(_ keys: [KeyDefinition]) -> [SwiftDeclaration] {
        keys.map { key in
            let valueType = key.form == .base64 ? "Data" : "String"
            let headerValue: String
            let decoding: [CodeLine]
            switch key.form {
            case .base64:
                headerValue = "value.base64EncodedString()"
                decoding = [.line("guard let value = Data(base64Encoded: headerValue) else { return nil }"), .line("self.value = value")]
            case .string:
                headerValue = "value"
                decoding = [.line("value = headerValue")]
            case .bearer:
                headerValue = "\"Bearer \" + value"
                // The scheme's name is case-insensitive (RFC 7235): `bearer abc` is a token too.
                decoding = [.line("guard headerValue.prefix(7).lowercased() == \"bearer \" else { return nil }"), .line("value = String(headerValue.dropFirst(7))")]
            }
            var documentation = key.documentation
            if !documentation.isEmpty { documentation.append("") }
            documentation.append("Sent as the `\(key.header)` header. Its description is always redacted.")
            return .type(SwiftTypeDeclaration(
                kind: .struct, documentation: documentation, access: access, name: key.swiftTypeName,
                conformances: ["RequestKey", "CustomStringConvertible", "CustomDebugStringConvertible", "CustomReflectable"],
                members: [
                    .property(SwiftProperty(documentation: ["The header the credential travels in."], access: access, isStatic: true, isLet: true, name: "headerName", initializer: "\"\(key.header)\"")),
                    .property(SwiftProperty(documentation: ["The secret value."], access: access, name: "value", type: valueType)),
                    .function(SwiftFunction(documentation: ["Wraps a credential value."], access: access, signature: "init(_ value: \(valueType))", body: [.line("self.value = value")])),
                    .property(SwiftProperty(documentation: ["The header's value."], access: access, name: "headerValue", type: "String", getter: [.line(headerValue)])),
                    .function(SwiftFunction(documentation: ["The credential a header value carries, or nil when it is not one."], access: access,
                                            signature: "init?(headerValue: String)", body: decoding)),
                    .property(SwiftProperty(access: access, name: "description", type: "String", getter: [.line("\"\(key.swiftTypeName)([REDACTED])\"")])),
                    .property(SwiftProperty(access: access, name: "debugDescription", type: "String", getter: [.line("description")])),
                    .property(SwiftProperty(documentation: ["What `dump` and `Mirror` see: nothing of the value."], access: access, name: "customMirror", type: "Mirror",
                                            getter: [.line("Mirror(self, children: [(label: String?, value: Any)](), displayStyle: .struct)")])),
                ]))
        }
    }
}
