/// Protobuf's well-known types (`google.protobuf.*`) as a built-in package.
///
/// A schema uses them with `import google.protobuf`; `timestamp` needs no import. Their Swift
/// types live in SwitchboardRuntime, generated from ``source`` by
/// `switchboard generate-well-known-types` and given hand-written JSON forms there, so
/// generated code and the runtime agree on one definition.
public enum WellKnownTypes {
    /// The package name, as protobuf spells it.
    public static let packageName = "google.protobuf"
    /// The module that declares the Swift types.
    public static let swiftModule = "SwitchboardRuntime"
    /// Prefixed to each top-level Swift type name, so `Duration` and `Any` do not clash with
    /// Swift's own types (`google.protobuf.Duration` is `ProtoDuration`).
    public static let swiftPrefix = "Proto"

    /// The `.proto` file of protobuf's distribution that declares a top-level type, for the
    /// `import` lines of exported `.proto` files.
    public static func protoFile(declaring name: String) -> String? {
        switch name {
        case "Timestamp": return "google/protobuf/timestamp.proto"
        case "Duration": return "google/protobuf/duration.proto"
        case "Empty": return "google/protobuf/empty.proto"
        case "FieldMask": return "google/protobuf/field_mask.proto"
        case "Any": return "google/protobuf/any.proto"
        case "Struct", "Value", "ListValue", "NullValue": return "google/protobuf/struct.proto"
        case "DoubleValue", "FloatValue", "Int64Value", "UInt64Value", "Int32Value", "UInt32Value", "BoolValue",
             "StringValue", "BytesValue": return "google/protobuf/wrappers.proto"
        default: return nil
        }
    }

    /// The package, compiled once. Top-level Swift names carry ``swiftPrefix``.
    public static let schema: Schema = {
        let output = SchemaCompiler.compile(files: [SourceFile(path: "google/protobuf/well_known_types.sb", text: source)])
        guard var schema = output.schema else {
            preconditionFailure("the built-in well-known types do not compile:\n\(output.renderedDiagnostics)")
        }
        for index in schema.messages.indices where schema.messages[index].parent == nil {
            schema.messages[index].swiftName = swiftPrefix + schema.messages[index].name
        }
        for index in schema.enums.indices where schema.enums[index].parent == nil {
            schema.enums[index].swiftName = swiftPrefix + schema.enums[index].name
        }
        func swiftPath(_ message: Int?) -> String? {
            guard let message else { return nil }
            return [swiftPath(schema.messages[message].parent), schema.messages[message].swiftName].compactMap { $0 }.joined(separator: ".")
        }
        for index in schema.messages.indices { schema.messages[index].swiftPath = swiftPath(index)! }
        for index in schema.enums.indices {
            schema.enums[index].swiftPath = [swiftPath(schema.enums[index].parent), schema.enums[index].swiftName].compactMap { $0 }.joined(separator: ".")
        }
        return schema
    }()

    /// The schema text: the messages of protobuf's distribution, field for field.
    public static let source = """
    package google.protobuf

    /// A point in time: seconds and nanoseconds since 1970-01-01T00:00:00Z, from year 1 to 9999.
    /// RFC 3339 text in JSON (`"1972-01-01T10:00:20.021Z"`).
    message Timestamp {
      1 seconds: int64
      2 nanos: int32
    }

    /// A signed span of time: up to 10,000 years, with nanosecond precision. `"1.5s"` in JSON.
    message Duration {
      1 seconds: int64
      2 nanos: int32
    }

    /// A `double` that can be absent; a bare number in JSON.
    message DoubleValue {
      1 value: double
    }

    /// A `float` that can be absent; a bare number in JSON.
    message FloatValue {
      1 value: float
    }

    /// An `int64` that can be absent; a quoted number in JSON.
    message Int64Value {
      1 value: int64
    }

    /// A `uint64` that can be absent; a quoted number in JSON.
    message UInt64Value {
      1 value: uint64
    }

    /// An `int32` that can be absent; a bare number in JSON.
    message Int32Value {
      1 value: int32
    }

    /// A `uint32` that can be absent; a bare number in JSON.
    message UInt32Value {
      1 value: uint32
    }

    /// A `bool` that can be absent; a bare `true` or `false` in JSON.
    message BoolValue {
      1 value: bool
    }

    /// A `string` that can be absent; a bare string in JSON.
    message StringValue {
      1 value: string
    }

    /// A `bytes` that can be absent; base64 text in JSON.
    message BytesValue {
      1 value: bytes
    }

    /// No fields: a request or response that carries nothing. `{}` in JSON.
    message Empty {
    }

    /// A set of field paths, such as the fields an update touches. `"user.displayName,photo"` in JSON.
    message FieldMask {
      1 paths: [string]
    }

    /// A JSON object: any JSON in JSON.
    message Struct {
      1 fields: {string: Value}
    }

    /// One JSON value: null, a number, a string, a bool, an object or a list.
    message Value {
      oneof kind {
        1 null_value: NullValue
        2 number_value: double
        3 string_value: string
        4 bool_value: bool
        5 struct_value: Struct
        6 list_value: ListValue
      }
    }

    /// JSON's `null`.
    enum NullValue {
      NULL_VALUE = 0
    }

    /// A JSON array.
    message ListValue {
      1 values: [Value]
    }

    /// A message of any type: its type's URL and its encoding. In JSON, the message's own JSON
    /// with an `"@type"` member; reading it needs the type registered (``AnyTypeRegistry``).
    message Any {
      1 type_url: string
      2 value: bytes
    }

    """
}
