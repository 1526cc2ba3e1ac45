import SwitchboardSchema

/// JSON Type Definitions (RFC 8927) of a schema's messages, in the form the generated and
/// dynamic codecs write them (canonical protobuf JSON): every field optional (defaults are
/// left out), 64-bit integers and millisecond timestamps as strings, enums by name (each a
/// definition of its own), maps as `values`, messages and enums by reference. Non-finite floats ("NaN") and enum numbers the schema does
/// not name are valid protobuf JSON that the definitions do not admit.
public struct JSONTypeDefinition {
    let schema: Schema

    /// Definitions for `schema`'s messages.
    public init(schema: Schema) { self.schema = schema }

    /// The root definition of `message`, with a definition for every message it reaches, as
    /// JSON text with sorted keys (deterministic).
    public func document(for message: Int) -> String {
        // A well-known type as the whole document (a Struct response, an Empty request) has
        // its special JSON form, as nested fields of it have; not its protobuf message shape.
        if let special = specialForm(message) { return render(special, indent: "") }
        var needed: [Int] = []
        var seen: Set<Int> = []
        // Enums are definitions of their own, referred to by each field of their type: written
        // inline, the document grew with fields × cases (a schema's thousand fields of a
        // thousand-case enum made a million names).
        var enums: Set<Int> = []
        var queue = [message]
        while let next = queue.popLast() {
            guard seen.insert(next).inserted else { continue }
            needed.append(next)
            for field in schema.messages[next].fields {
                switch field.shape.valueType {
                case let .message(index) where !isSpecial(index): queue.append(index)
                case let .enumeration(index) where !isNullValue(index): enums.insert(index)
                default: break
                }
            }
        }
        let definitions = needed.map { (schema.messages[$0].fullName, messageForm($0)) }
            + enums.map { (schema.enums[$0].fullName, enumForm($0)) }
        return render(.object([("definitions", .object(definitions.sorted { $0.0 < $1.0 })),
                               ("ref", .string(schema.messages[message].fullName))]), indent: "")
    }

    func isNullValue(_ index: Int) -> Bool { schema.enums[index].fullName == "google.protobuf.NullValue" }

    /// An enum's names, each once (aliases share a value, not a name).
    func enumForm(_ index: Int) -> Node {
        var names: [String] = []
        var seen: Set<String> = []
        for item in schema.enums[index].cases where seen.insert(item.name).inserted { names.append(item.name) }
        return .object([("enum", .array(names.map(Node.string)))])
    }

    indirect enum Node {
        case string(String)
        case bool(Bool)
        case object([(String, Node)])
        case array([Node])
    }

    func messageForm(_ index: Int) -> Node {
        let fields = schema.messages[index].fields.sorted { $0.jsonName < $1.jsonName }
        return .object([
            ("additionalProperties", .bool(false)),
            ("optionalProperties", .object(fields.map { ($0.jsonName, fieldForm($0.shape)) })),
        ])
    }

    func fieldForm(_ shape: FieldShape) -> Node {
        switch shape {
        case let .singular(type), let .optional(type): return valueForm(type)
        case let .list(type): return .object([("elements", valueForm(type))])
        case let .map(_, value): return .object([("values", valueForm(value))])
        }
    }

    func type(_ name: String) -> Node { .object([("type", .string(name))]) }

    func valueForm(_ type: ValueType) -> Node {
        switch type {
        case let .scalar(scalar):
            switch scalar {
            case .bool: return self.type("boolean")
            case .int32, .sint32, .sfixed32: return self.type("int32")
            case .uint32, .fixed32: return self.type("uint32")
            case .int64, .sint64, .sfixed64, .uint64, .fixed64, .string, .bytes: return self.type("string")
            case .float: return self.type("float32")
            case .double: return self.type("float64")
            }
        case let .enumeration(index):
            if isNullValue(index) { return .object([]) }
            return .object([("ref", .string(schema.enums[index].fullName))])
        case .timestamp(.millis): return self.type("string")
        case let .message(index):
            if let special = specialForm(index) { return special }
            return .object([("ref", .string(schema.messages[index].fullName))])
        }
    }

    func isSpecial(_ index: Int) -> Bool { specialForm(index) != nil }

    /// The well-known types' JSON forms.
    func specialForm(_ index: Int) -> Node? {
        let nullable = { (node: Node) -> Node in
            guard case let .object(members) = node else { return node }
            return .object(members + [("nullable", .bool(true))])
        }
        switch schema.messages[index].fullName {
        case "google.protobuf.Timestamp": return type("timestamp")
        case "google.protobuf.Duration", "google.protobuf.FieldMask": return type("string")
        case "google.protobuf.Empty": return .object([("properties", .object([]))])
        case "google.protobuf.Struct": return .object([("values", .object([]))])
        case "google.protobuf.ListValue": return .object([("elements", .object([]))])
        case "google.protobuf.Value": return .object([])
        case "google.protobuf.Any":
            return .object([("additionalProperties", .bool(true)), ("optionalProperties", .object([("@type", type("string"))]))])
        case "google.protobuf.BoolValue": return nullable(type("boolean"))
        case "google.protobuf.Int32Value": return nullable(type("int32"))
        case "google.protobuf.UInt32Value": return nullable(type("uint32"))
        case "google.protobuf.FloatValue": return nullable(type("float32"))
        case "google.protobuf.DoubleValue": return nullable(type("float64"))
        case "google.protobuf.Int64Value", "google.protobuf.UInt64Value", "google.protobuf.StringValue", "google.protobuf.BytesValue":
            return nullable(type("string"))
        default: return nil
        }
    }

    func render(_ node: Node, indent: String) -> String {
        let inner = indent + "  "
        switch node {
        case let .string(text): return CatalogueExporter.jsonString(text)
        case let .bool(flag): return flag ? "true" : "false"
        case let .array(items):
            return items.isEmpty ? "[]" : "[" + items.map { render($0, indent: inner) }.joined(separator: ", ") + "]"
        case let .object(members):
            guard !members.isEmpty else { return "{}" }
            let sorted = members.sorted { $0.0 < $1.0 }
            return "{\n" + sorted.map { inner + CatalogueExporter.jsonString($0.0) + ": " + render($0.1, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "}"
        }
    }
}
