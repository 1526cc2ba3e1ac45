import Foundation
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema

/// Random messages of any schema type, built from the schema at run time: every field of a
/// large message (protobuf's conformance message) without a hand-written generator. Values
/// of the well-known types stay within what they allow (valid timestamps, durations and
/// field masks; a Value always has a kind; an Any packs a message of the schema).
struct RandomDynamicMessages {
    let schema: Schema
    var random: RandomMessages
    /// A message an Any may pack, and its type URL.
    let anyPayload: (type: Int, url: String)?
    /// Draws only enum values the schema names and finite floats: what a JSON Type
    /// Definition of the schema can describe.
    var describableOnly = false

    init(schema: Schema, seed: UInt64, anyPayload: String? = nil) {
        self.schema = schema
        random = RandomMessages(seed: seed)
        self.anyPayload = anyPayload.flatMap { name in
            schema.messageIndex(named: name).map { ($0, "type.googleapis.com/" + name) }
        }
    }

    mutating func message(_ type: Int, depth: Int) -> DynamicMessage {
        let definition = schema.messages[type]
        if definition.importedFrom != nil, let special = wellKnown(definition, type: type, depth: depth) { return special }
        var message = DynamicMessage(type: type)
        var oneofSet: Set<Int> = []
        for field in definition.fields where random.chance(depth > 0 ? 35 : 15) {
            if let oneof = field.oneof, !oneofSet.insert(oneof).inserted { continue }
            let valueType = field.shape.valueType
            if case .message = valueType, depth <= 0 { continue }
            switch field.shape {
            case .singular, .optional:
                message.fields[field.number] = .single(value(valueType, depth: depth - 1))
            case .list:
                let items = (0..<Int.random(in: 1...3, using: &random.rng)).map { _ in value(valueType, depth: depth - 1) }
                message.fields[field.number] = .list(items)
            case let .map(key, valueType):
                var entries: [DynamicValue: DynamicMapEntry] = [:]
                for _ in 0..<Int.random(in: 1...3, using: &random.rng) {
                    let entry = DynamicMapEntry(key: value(.scalar(key), depth: 0), value: value(valueType, depth: depth - 1))
                    entries[entry.key] = entry
                }
                message.fields[field.number] = .map(Array(entries.values))
            }
        }
        return message
    }

    mutating func value(_ type: ValueType, depth: Int) -> DynamicValue {
        switch type {
        case let .scalar(scalar):
            switch scalar {
            case .bool: return .bool(random.chance(50))
            case .int32, .sint32, .sfixed32: return .int(Int64(random.integer(Int32.self)))
            case .int64, .sint64, .sfixed64: return .int(random.integer(Int64.self))
            case .uint32, .fixed32: return .uint(UInt64(random.integer(UInt32.self)))
            case .uint64, .fixed64: return .uint(random.integer(UInt64.self))
            case .float:
                let number = random.float()
                return .float(describableOnly && !number.isFinite ? 1.5 : number)
            case .double:
                let number = random.double()
                return .double(describableOnly && !number.isFinite ? -2.25 : number)
            case .string: return .string(random.string())
            case .bytes: return .bytes(random.bytes())
            }
        case let .enumeration(index):
            let cases = schema.enums[index].cases.map(\.value)
            // NullValue is `null` in JSON whatever its number, so only its one value survives.
            if schema.enums[index].importedFrom != nil { return .enumeration(0) }
            return .enumeration(random.chance(85) || describableOnly ? cases.randomElement(using: &random.rng)! : 77)
        case let .message(index):
            return .message(message(index, depth: depth))
        case .timestamp:
            // Whole milliseconds: what `timestamp(millis)` carries.
            return .timestamp(seconds: Int64.random(in: -10_000_000_000...10_000_000_000, using: &random.rng),
                              nanos: Int32.random(in: 0..<1000, using: &random.rng) * 1_000_000)
        }
    }

    /// Values the well-known types allow; `nil` for those whose fields may hold anything.
    mutating func wellKnown(_ definition: MessageDefinition, type: Int, depth: Int) -> DynamicMessage? {
        func parts(_ seconds: Int64, _ nanos: Int32) -> DynamicMessage {
            var fields: [Int: DynamicField] = [:]
            if seconds != 0 { fields[1] = .single(.int(seconds)) }
            if nanos != 0 { fields[2] = .single(.int(Int64(nanos))) }
            return DynamicMessage(type: type, fields: fields)
        }
        switch definition.name {
        case "Timestamp":
            let timestamp = random.date()
            return parts(timestamp.seconds, timestamp.nanos)
        case "Duration":
            let duration = random.duration()
            return parts(duration.seconds, duration.nanos)
        case "FieldMask":
            let paths = random.fieldMask().paths.map(DynamicValue.string)
            return DynamicMessage(type: type, fields: paths.isEmpty ? [:] : [1: .list(paths)])
        case "Value":
            let kinds = depth > 0 ? 1...6 : 1...4
            let kind = Int.random(in: kinds, using: &random.rng)
            let member = definition.fields.first { $0.number == kind }!
            var payload = value(member.shape.valueType, depth: depth - 1)
            if case let .double(number) = payload, !number.isFinite { payload = .double(0.5) }
            if kind == 1 { payload = .enumeration(0) }
            return DynamicMessage(type: type, fields: [kind: .single(payload)])
        case "Any":
            guard let anyPayload, depth > 0, random.chance(70) else { return DynamicMessage(type: type) }
            let packed = DynamicBinaryCodec(schema: schema).encode(message(anyPayload.type, depth: 0))
            var fields: [Int: DynamicField] = [1: .single(.string(anyPayload.url))]
            if !packed.isEmpty { fields[2] = .single(.bytes(packed)) }
            return DynamicMessage(type: type, fields: fields)
        default:
            return nil
        }
    }
}
