import Foundation
import SwitchboardRuntime
import SwitchboardSchema

extension DynamicEndpoint {
    /// The request message a REST-style request stands for, as the generated handler would
    /// bind it: path parameters (still percent-encoded, as ``PathTemplate/match(_:)`` gives
    /// them), query parameters, header-bound fields (`header "Idempotency-Key" clientMessageId`)
    /// and the JSON body each fill their fields; a bound field may also come in the body. `nil` for an
    /// endpoint without a request message. Unknown query parameters are errors, so a typo is
    /// not dropped silently.
    public func requestMessage(
        pathParameters: [String: String], query: Substring, headers: RPCHeaders = [:], jsonBody: Data
    ) throws(DynamicCodecError) -> DynamicMessage? {
        guard let type = endpoint.request else {
            if !query.isEmpty { throw DynamicCodecError("\(service.name).\(endpoint.name) takes no query parameters") }
            if !Self.isEmptyJSON(jsonBody) { throw DynamicCodecError("\(service.name).\(endpoint.name) takes no request body") }
            return nil
        }
        var message: DynamicMessage
        let codec = DynamicJSONCodec(schema: schema)
        switch endpoint.body {
        case .none:
            if !Self.isEmptyJSON(jsonBody) { throw DynamicCodecError("\(endpoint.verb) \(endpoint.runtimePathTemplate) takes no body; its fields go in the path and query") }
            message = DynamicMessage(type: type)
        case .request:
            message = try codec.decode(Self.isEmptyJSON(jsonBody) ? Data("{}".utf8) : jsonBody, as: type)
        case let .field(index):
            let field = schema.messages[type].fields[index]
            message = DynamicMessage(type: type)
            if case let .message(bodyType) = field.shape.valueType, !Self.isEmptyJSON(jsonBody) {
                message.fields[field.number] = .single(.message(try codec.decode(jsonBody, as: bodyType)))
            }
        }
        let fields = schema.messages[type].fields
        for binding in endpoint.pathParameters {
            guard let raw = pathParameters[binding.name], let text = PathEncoding.percentDecode(raw[...]) else {
                throw DynamicCodecError("the path needs '\(binding.name)'")
            }
            try bind(text, encoding: binding.encoding, to: fields[binding.field], in: &message)
        }
        for binding in endpoint.headers {
            let text: String?
            do throws(RequestBindingError) { text = try headers.onlyValue(binding.name) } catch { throw DynamicCodecError(error.description) }
            // Refused as generated handlers refuse it (`ServerBinding.header`).
            if let text, text.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") }) {
                throw DynamicCodecError("header '\(binding.name)' holds NUL, CR or LF")
            }
            if let text { try bind(text, encoding: binding.encoding, to: fields[binding.field], in: &message) }
        }
        guard let pairs = PathEncoding.parseQuery(query) else { throw DynamicCodecError("the query is not valid percent-encoding") }
        var seenSingular = Set<String>()
        for (name, value) in pairs {
            guard let binding = endpoint.queryParameters.first(where: { $0.name == name }) else {
                let known = endpoint.queryParameters.map(\.name)
                throw DynamicCodecError("unknown query parameter '\(name)'" + (known.isEmpty ? "; the endpoint takes none" : "; it takes: \(known.joined(separator: ", "))"))
            }
            if case .list = fields[binding.field].shape {} else if !seenSingular.insert(name).inserted {
                throw DynamicCodecError("query parameter '\(name)' is given more than once")
            }
            try bind(value, encoding: binding.encoding, to: fields[binding.field], in: &message)
        }
        return message
    }

    /// Sets `field` from the text of a path or query parameter (lists append).
    func bind(_ text: String, encoding: ParameterEncoding, to field: FieldDefinition, in message: inout DynamicMessage) throws(DynamicCodecError) {
        let value = try parameterValue(text, encoding: encoding, type: field.shape.valueType, field: field)
        if case .list = field.shape {
            // Taken out, appended to and put back: a query repeating one parameter n times
            // costs n appends, not n copies of the list.
            if case var .list(values)? = message.fields.removeValue(forKey: field.number) {
                values.append(value)
                message.fields[field.number] = .list(values)
            } else {
                message.fields[field.number] = .list([value])
            }
        } else {
            message.fields[field.number] = .single(value)
        }
    }

    /// Parses parameter text the way generated handlers do (``ParameterValue``).
    func parameterValue(_ text: String, encoding: ParameterEncoding, type: ValueType, field: FieldDefinition) throws(DynamicCodecError) -> DynamicValue {
        let bad = DynamicCodecError("'\(text.count > 64 ? String(text.prefix(64)) + "…" : text)' is not a valid \(field.jsonName)")
        switch type {
        case let .scalar(scalar):
            switch scalar {
            case .string: return .string(text)
            case .bytes:
                guard let data = PathEncoding.base64URLDecode(text[...]) else { throw bad }
                return .bytes(data)
            case .bool:
                guard let flag = Bool(parameterText: text) else { throw bad }
                return .bool(flag)
            case .int32, .sint32, .sfixed32:
                guard let number = Int32(text, radix: 10) else { throw bad }
                return .int(Int64(number))
            case .int64, .sint64, .sfixed64:
                guard let number = Int64(text, radix: 10) else { throw bad }
                return .int(number)
            case .uint32, .fixed32:
                guard let number = UInt32(text, radix: 10) else { throw bad }
                return .uint(UInt64(number))
            case .uint64, .fixed64:
                guard let number = UInt64(text, radix: 10) else { throw bad }
                return .uint(number)
            case .float:
                guard let number = Float(text), number.isFinite else { throw bad }
                return .float(number)
            case .double:
                guard let number = Double(text), number.isFinite else { throw bad }
                return .double(number)
            }
        case let .enumeration(index):
            // Byte for byte, as generated code matches enum names.
            if let match = schema.enums[index].cases.first(where: { $0.name.utf8.elementsEqual(text.utf8) }) { return .enumeration(match.value) }
            guard let number = Int32(text, radix: 10) else { throw bad }
            return .enumeration(number)
        case .timestamp(.millis):
            guard let millis = Int64(text, radix: 10) else { throw bad }
            // Held to the range a `Date` keeps exactly, as generated handlers hold it.
            return .timestamp(millis: UnixMillisTimestampCodec.clamped(millis))
        case .message:
            throw DynamicCodecError("'\(field.jsonName)' cannot be bound to a path or query")
        }
    }

    static func isEmptyJSON(_ body: Data) -> Bool {
        body.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    }
}
