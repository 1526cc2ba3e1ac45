import Foundation
import SwitchboardRuntime
import SwitchboardSchema

/// Protobuf binary for ``DynamicMessage``, driven by the schema.
public struct DynamicBinaryCodec: Sendable {
    public let schema: Schema
    /// Nesting bound for hostile input.
    public var maximumDepth = 100

    public init(schema: Schema) { self.schema = schema }

    // MARK: Encoding

    /// Encodes `message` as the generated code would: fields by number, defaults left out,
    /// packable lists packed.
    public func encode(_ message: DynamicMessage) -> Data {
        var output: [UInt8] = []
        append(message, to: &output)
        return Data(output)
    }

    private func append(_ message: DynamicMessage, to output: inout [UInt8]) {
        for field in schema.messages[message.type].fieldsByNumber {
            guard let value = message.fields[field.number] else { continue }
            switch value {
            case let .single(single):
                if field.hasImplicitPresence && single.isDefault { continue }
                appendTagged(single, type: field.shape.valueType, number: field.number, to: &output)
            case let .list(items):
                if field.shape.valueType.isPackable, !items.isEmpty {
                    var packed: [UInt8] = []
                    for item in items { appendPayload(item, type: field.shape.valueType, to: &packed) }
                    appendVarint(UInt64(WireTag(fieldNumber: field.number, wireType: .lengthDelimited).rawValue), to: &output)
                    appendVarint(UInt64(packed.count), to: &output)
                    output += packed
                } else {
                    for item in items { appendTagged(item, type: field.shape.valueType, number: field.number, to: &output) }
                }
            case let .map(entries):
                guard case let .map(keyType, valueType) = field.shape else { continue }
                for entry in entries {
                    var body: [UInt8] = []
                    appendTagged(entry.key, type: .scalar(keyType), number: 1, to: &body)
                    appendTagged(entry.value, type: valueType, number: 2, to: &body)
                    appendVarint(UInt64(WireTag(fieldNumber: field.number, wireType: .lengthDelimited).rawValue), to: &output)
                    appendVarint(UInt64(body.count), to: &output)
                    output += body
                }
            }
        }
    }

    private func appendTagged(_ value: DynamicValue, type: ValueType, number: Int, to output: inout [UInt8]) {
        appendVarint(UInt64(WireTag(fieldNumber: number, wireType: Self.wireType(of: type)).rawValue), to: &output)
        appendPayload(value, type: type, to: &output)
    }

    private func appendPayload(_ value: DynamicValue, type: ValueType, to output: inout [UInt8]) {
        switch (type, value) {
        case let (.scalar(scalar), value):
            appendScalar(value, scalar, to: &output)
        case let (.enumeration, .enumeration(number)):
            appendVarint(UInt64(bitPattern: Int64(number)), to: &output)
        case let (.message, .message(message)):
            var body: [UInt8] = []
            append(message, to: &body)
            appendVarint(UInt64(body.count), to: &output)
            output += body
        case let (.timestamp(.millis), .timestamp(seconds, nanos)):
            appendVarint(UInt64(bitPattern: seconds &* 1000 &+ Int64(nanos / 1_000_000)), to: &output)
        case let (.timestamp(.wellKnown), .timestamp(seconds, nanos)):
            var body: [UInt8] = []
            if seconds != 0 { appendVarint(8, to: &body); appendVarint(UInt64(bitPattern: seconds), to: &body) }
            if nanos != 0 { appendVarint(16, to: &body); appendVarint(UInt64(bitPattern: Int64(nanos)), to: &body) }
            appendVarint(UInt64(body.count), to: &output)
            output += body
        default:
            // The JSON reader only builds values that match their field's type.
            assertionFailure("value \(value) does not fit \(type)")
        }
    }

    private func appendScalar(_ value: DynamicValue, _ scalar: ScalarType, to output: inout [UInt8]) {
        switch (scalar, value) {
        case let (.bool, .bool(flag)): appendVarint(flag ? 1 : 0, to: &output)
        case let (.int32, .int(number)), let (.int64, .int(number)): appendVarint(UInt64(bitPattern: number), to: &output)
        case let (.uint32, .uint(number)), let (.uint64, .uint(number)): appendVarint(number, to: &output)
        case let (.sint32, .int(number)), let (.sint64, .int(number)): appendVarint(ZigZag.encode(number), to: &output)
        case let (.fixed32, .uint(number)): appendFixed(UInt64(number), bytes: 4, to: &output)
        case let (.sfixed32, .int(number)): appendFixed(UInt64(UInt32(bitPattern: Int32(truncatingIfNeeded: number))), bytes: 4, to: &output)
        case let (.fixed64, .uint(number)): appendFixed(number, bytes: 8, to: &output)
        case let (.sfixed64, .int(number)): appendFixed(UInt64(bitPattern: number), bytes: 8, to: &output)
        case let (.float, .float(number)): appendFixed(UInt64(number.bitPattern), bytes: 4, to: &output)
        case let (.double, .double(number)): appendFixed(number.bitPattern, bytes: 8, to: &output)
        case let (.string, .string(text)):
            appendVarint(UInt64(text.utf8.count), to: &output)
            output += Array(text.utf8)
        case let (.bytes, .bytes(data)):
            appendVarint(UInt64(data.count), to: &output)
            output += data
        default:
            assertionFailure("value \(value) does not fit \(scalar)")
        }
    }

    static func wireType(of type: ValueType) -> WireType {
        switch type {
        case let .scalar(scalar):
            switch scalar {
            case .fixed32, .sfixed32, .float: return .fixed32
            case .fixed64, .sfixed64, .double: return .fixed64
            case .string, .bytes: return .lengthDelimited
            default: return .varint
            }
        case .enumeration, .timestamp(.millis): return .varint
        case .message, .timestamp(.wellKnown): return .lengthDelimited
        }
    }

    private func appendVarint(_ value: UInt64, to output: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            output.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        output.append(UInt8(value))
    }

    private func appendFixed(_ value: UInt64, bytes: Int, to output: inout [UInt8]) {
        for index in 0..<bytes { output.append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }

    // MARK: Decoding

    /// Decodes `data` as message type `type`; unknown fields are skipped.
    public func decode(_ data: Data, as type: Int) throws(DynamicCodecError) -> DynamicMessage {
        let result: Result<DynamicMessage, DynamicCodecError> = data.withUnsafeBytes { buffer in
            do throws(DynamicCodecError) {
                return .success(try decodeMessage(buffer, type: type, depth: 0))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private func decodeMessage(_ buffer: UnsafeRawBufferPointer, type: Int, depth: Int) throws(DynamicCodecError) -> DynamicMessage {
        guard depth < maximumDepth else { throw DynamicCodecError("nesting deeper than \(maximumDepth)") }
        let definition = schema.messages[type]
        var message = DynamicMessage(type: type)
        var reader = WireReader(buffer: buffer)
        var unknown = UnknownFields()
        do {
            while let tag = try reader.nextTag() {
                guard let field = definition.fields.first(where: { $0.number == tag.fieldNumber }) else {
                    try reader.skipField(tag, into: &unknown)
                    continue
                }
                let valueType = field.shape.valueType
                switch field.shape {
                case .singular, .optional:
                    guard tag.wireType == Self.wireType(of: valueType) else { throw DynamicCodecError("\(definition.name).\(field.name): wrong wire type \(tag.wireType)") }
                    var value = try readValue(&reader, type: valueType, depth: depth)
                    // A repeated embedded message merges, as protobuf specifies.
                    if case let .message(next) = value, case let .single(.message(previous))? = message.fields[field.number] {
                        value = .message(merge(previous, next))
                    }
                    // Setting one member of a oneof clears the others.
                    if let oneof = field.oneof {
                        // Oneof members are listed by index into the message's fields.
                        for member in definition.oneofs[oneof].fields where definition.fields[member].number != field.number {
                            message.fields[definition.fields[member].number] = nil
                        }
                    }
                    message.fields[field.number] = .single(value)
                case .list:
                    var items: [DynamicValue] = []
                    if case let .list(existing)? = message.fields[field.number] {
                        // Taken out first, so appending does not copy the whole list each time.
                        items = existing
                        message.fields[field.number] = nil
                    }
                    if tag.wireType == .lengthDelimited && valueType.isPackable {
                        var packed = WireReader(buffer: try reader.readLengthDelimited())
                        while !packed.isAtEnd { items.append(try readValue(&packed, type: valueType, depth: depth)) }
                    } else {
                        guard tag.wireType == Self.wireType(of: valueType) else { throw DynamicCodecError("\(definition.name).\(field.name): wrong wire type \(tag.wireType)") }
                        items.append(try readValue(&reader, type: valueType, depth: depth))
                    }
                    message.fields[field.number] = .list(items)
                case let .map(keyType, mapValueType):
                    guard tag.wireType == .lengthDelimited else { throw DynamicCodecError("\(definition.name).\(field.name): a map entry must be length-delimited") }
                    var entryReader = WireReader(buffer: try reader.readLengthDelimited())
                    var key = Self.defaultValue(.scalar(keyType))
                    var value = Self.defaultValue(mapValueType)
                    var entryUnknown = UnknownFields()
                    while let entryTag = try entryReader.nextTag() {
                        switch entryTag.fieldNumber {
                        case 1:
                            guard entryTag.wireType == Self.wireType(of: .scalar(keyType)) else { throw DynamicCodecError("\(definition.name).\(field.name): map key has wire type \(entryTag.wireType)") }
                            key = try readValue(&entryReader, type: .scalar(keyType), depth: depth)
                        case 2:
                            guard entryTag.wireType == Self.wireType(of: mapValueType) else { throw DynamicCodecError("\(definition.name).\(field.name): map value has wire type \(entryTag.wireType)") }
                            value = try readValue(&entryReader, type: mapValueType, depth: depth)
                        default: try entryReader.skipField(entryTag, into: &entryUnknown)
                        }
                    }
                    // Entries are collected in wire order and put in key order once, below.
                    var entries: [DynamicMapEntry] = []
                    if case let .map(existing)? = message.fields[field.number] {
                        entries = existing
                        message.fields[field.number] = nil
                    }
                    entries.append(DynamicMapEntry(key: key, value: value))
                    message.fields[field.number] = .map(entries)
                }
            }
            for (number, value) in message.fields {
                if case let .map(entries) = value { message.fields[number] = .map(DynamicMapEntry.canonicalOrder(entries)) }
            }
        } catch let error as DynamicCodecError {
            throw error
        } catch {
            throw DynamicCodecError("\(definition.name): \(error)")
        }
        return message
    }

    /// Protobuf's merge of `next` into `previous` (same type): scalars and oneof members are
    /// replaced, embedded messages merge recursively, lists concatenate, maps merge by key.
    private func merge(_ previous: DynamicMessage, _ next: DynamicMessage) -> DynamicMessage {
        let definition = schema.messages[previous.type]
        var result = previous
        for (number, incoming) in next.fields {
            guard let field = definition.fields.first(where: { $0.number == number }) else { continue }
            if let oneof = field.oneof {
                for member in definition.oneofs[oneof].fields where definition.fields[member].number != number {
                    result.fields[definition.fields[member].number] = nil
                }
            }
            switch (result.fields[number], incoming) {
            case let (.single(.message(old))?, .single(.message(new))):
                result.fields[number] = .single(.message(merge(old, new)))
            case let (.list(old)?, .list(new)):
                result.fields[number] = .list(old + new)
            case let (.map(old)?, .map(new)):
                result.fields[number] = .map(DynamicMapEntry.canonicalOrder(old + new))
            default:
                result.fields[number] = incoming
            }
        }
        return result
    }

    private func readValue(_ reader: inout WireReader, type: ValueType, depth: Int) throws(DynamicCodecError) -> DynamicValue {
        do {
            switch type {
            case let .scalar(scalar):
                switch scalar {
                case .bool: return .bool(try reader.readVarint() != 0)
                case .int32: return .int(Int64(Int32(truncatingIfNeeded: try reader.readVarint())))
                case .int64: return .int(Int64(bitPattern: try reader.readVarint()))
                case .uint32: return .uint(UInt64(UInt32(truncatingIfNeeded: try reader.readVarint())))
                case .uint64: return .uint(try reader.readVarint())
                case .sint32: return .int(Int64(ZigZag.decode(UInt32(truncatingIfNeeded: try reader.readVarint()))))
                case .sint64: return .int(ZigZag.decode(try reader.readVarint()))
                case .fixed32: return .uint(UInt64(try reader.readFixed32()))
                case .sfixed32: return .int(Int64(Int32(bitPattern: try reader.readFixed32())))
                case .fixed64: return .uint(try reader.readFixed64())
                case .sfixed64: return .int(Int64(bitPattern: try reader.readFixed64()))
                case .float: return .float(Float(bitPattern: try reader.readFixed32()))
                case .double: return .double(Double(bitPattern: try reader.readFixed64()))
                case .string: return .string(try reader.readString())
                case .bytes: return .bytes(try reader.readBytes())
                }
            case .enumeration:
                return .enumeration(Int32(truncatingIfNeeded: try reader.readVarint()))
            case let .message(index):
                return .message(try decodeMessage(try reader.readLengthDelimited(), type: index, depth: depth + 1))
            case .timestamp(.millis):
                return .timestamp(millis: Int64(bitPattern: try reader.readVarint()))
            case .timestamp(.wellKnown):
                var inner = WireReader(buffer: try reader.readLengthDelimited())
                var seconds: Int64 = 0, nanos: Int32 = 0
                var unknown = UnknownFields()
                while let tag = try inner.nextTag() {
                    switch (tag.fieldNumber, tag.wireType) {
                    case (1, .varint): seconds = Int64(bitPattern: try inner.readVarint())
                    case (2, .varint): nanos = Int32(truncatingIfNeeded: try inner.readVarint())
                    default: try inner.skipField(tag, into: &unknown)
                    }
                }
                return .timestamp(seconds: seconds, nanos: nanos)
            }
        } catch let error as DynamicCodecError {
            throw error
        } catch {
            throw DynamicCodecError("\(error)")
        }
    }

    /// The value an absent field reads as.
    static func defaultValue(_ type: ValueType) -> DynamicValue {
        switch type {
        case let .scalar(scalar):
            switch scalar {
            case .bool: return .bool(false)
            case .int32, .int64, .sint32, .sint64, .sfixed32, .sfixed64: return .int(0)
            case .uint32, .uint64, .fixed32, .fixed64: return .uint(0)
            case .float: return .float(0)
            case .double: return .double(0)
            case .string: return .string("")
            case .bytes: return .bytes(Data())
            }
        case .enumeration: return .enumeration(0)
        case let .message(index): return .message(DynamicMessage(type: index))
        case .timestamp: return .timestamp(seconds: 0, nanos: 0)
        }
    }
}
