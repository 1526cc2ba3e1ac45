import Foundation
import SwitchboardRuntime
import SwitchboardSchema

/// Protobuf binary for ``DynamicMessage``, driven by the schema.
public struct DynamicBinaryCodec: Sendable {
    public let schema: Schema
    /// Nesting bound for hostile input.
    public var maximumDepth = 100
    /// For each message type, its fields' indexes by field number.
    private let fieldIndexes: [[Int: Int]]
    /// Set on the first, shallow attempt of a decode (``shallowDepth``): reaching its limit
    /// means "try again with room", not an error.
    private var isShallowAttempt = false

    /// How deep a decode goes on the caller's thread. A debug build spends several KB of stack
    /// a level here, and 100 levels overflowed the 512 KB that Apple platforms give secondary,
    /// Dispatch and Swift concurrency threads (found by review): a message nested deeper is
    /// decoded again on a thread with room for ``maximumDepth``. Almost none is.
    static let shallowDepth = 16
    private static let shallowLimitReached = "the shallow attempt reached its depth"

    public init(schema: Schema) {
        self.schema = schema
        fieldIndexes = schema.messages.map { message in
            Dictionary(message.fields.enumerated().map { ($0.element.number, $0.offset) }, uniquingKeysWith: { first, _ in first })
        }
    }

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
                if field.isPacked, !items.isEmpty {
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
        output += message.unknownFields.bytes
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

    /// Whether a field of `shape` reads a value of `wireType` (lists also read packed runs).
    static func accepts(_ wireType: WireType, for shape: FieldShape) -> Bool {
        switch shape {
        case .singular, .optional: wireType == Self.wireType(of: shape.valueType)
        case .list: wireType == Self.wireType(of: shape.valueType) || (wireType == .lengthDelimited && shape.valueType.isPackable)
        case .map: wireType == .lengthDelimited
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
        case .message: return .lengthDelimited
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

    /// Decodes `data` as message type `type`; unknown fields are kept as bytes. Time and memory
    /// are linear in the input, however often a field repeats: a repeated embedded message
    /// merges in place, and map entries are put in key order once, at the end.
    public func decode(_ data: Data, as type: Int) throws(DynamicCodecError) -> DynamicMessage {
        guard maximumDepth > Self.shallowDepth else { return try decodeHere(data, as: type).get() }
        var shallow = self
        shallow.maximumDepth = Self.shallowDepth
        shallow.isShallowAttempt = true
        let first = shallow.decodeHere(data, as: type)
        if case let .failure(error) = first, error.message == Self.shallowLimitReached {
            // Never on the caller's stack, which the first attempt found too small for it.
            guard let deep = DeepStack.runIfPossible({ self.decodeHere(data, as: type) }) else {
                throw DynamicCodecError("nested deeper than \(Self.shallowDepth) levels, and the system refused the thread with room to decode it")
            }
            return try deep.get()
        }
        return try first.get()
    }

    private func decodeHere(_ data: Data, as type: Int) -> Result<DynamicMessage, DynamicCodecError> {
        data.withUnsafeBytes { buffer in
            do throws(DynamicCodecError) {
                var message = DynamicMessage(type: type)
                try decodeFields(buffer, into: &message, depth: 0)
                try Self.putMapsInOrder(&message)
                return .success(message)
            } catch {
                return .failure(error)
            }
        }
    }

    /// Reads `buffer`'s fields into `message`, merging with what it holds (protobuf's rule
    /// for a singular message field that appears more than once).
    private func decodeFields(_ buffer: UnsafeRawBufferPointer, into message: inout DynamicMessage, depth: Int) throws(DynamicCodecError) {
        guard depth < maximumDepth else {
            throw DynamicCodecError(isShallowAttempt ? Self.shallowLimitReached : "nesting deeper than \(maximumDepth)")
        }
        let definition = schema.messages[message.type]
        let numbers = fieldIndexes[message.type]
        // Unknown groups nest within what is left of the same budget, as in the generated
        // codec: a fresh reader's own 100 at every level let 16 levels recurse 1,600 deep.
        var reader = WireReader(buffer: buffer, options: WireDecodingOptions(maximumDepth: maximumDepth - depth))
        var unknown = UnknownFields()
        // Per map field, how many entries it held after its last compaction (below).
        var compactedMapSizes: [Int: Int] = [:]
        do {
            while let tag = try reader.nextTag() {
                guard let fieldIndex = numbers[tag.fieldNumber] else {
                    try reader.skipField(tag, into: &unknown)
                    continue
                }
                let field = definition.fields[fieldIndex]
                let valueType = field.shape.valueType
                // A known number with the wrong wire type is an unknown field, as in the generated codec.
                guard Self.accepts(tag.wireType, for: field.shape) else {
                    try reader.skipField(tag, into: &unknown)
                    continue
                }
                switch field.shape {
                case .singular, .optional:
                    // Setting one member of a oneof clears the others.
                    if let oneof = field.oneof {
                        // Oneof members are listed by index into the message's fields.
                        for member in definition.oneofs[oneof].fields where definition.fields[member].number != field.number {
                            message.fields[definition.fields[member].number] = nil
                        }
                    }
                    if case let .message(type) = valueType {
                        // Taken out while it merges, so its storage is not shared and the merge is in place.
                        var nested = DynamicMessage(type: type)
                        if case let .single(.message(existing))? = message.fields.removeValue(forKey: field.number) { nested = existing }
                        try decodeFields(try reader.readLengthDelimited(), into: &nested, depth: depth + 1)
                        message.fields[field.number] = .single(.message(nested))
                    } else {
                        let value = try readValue(&reader, type: valueType, depth: depth)
                        // A proto3 default read from the wire is the same as no value: kept as
                        // absent, so a message equals its own re-encoding.
                        message.fields[field.number] = field.hasImplicitPresence && value.isDefault ? nil : .single(value)
                    }
                case .list:
                    var items: [DynamicValue] = []
                    if case let .list(existing)? = message.fields.removeValue(forKey: field.number) {
                        // Taken out first, so appending does not copy the whole list each time.
                        items = existing
                    }
                    if tag.wireType == .lengthDelimited && valueType.isPackable {
                        var packed = WireReader(buffer: try reader.readLengthDelimited())
                        while !packed.isAtEnd { items.append(try readValue(&packed, type: valueType, depth: depth)) }
                    } else {
                        items.append(try readValue(&reader, type: valueType, depth: depth))
                    }
                    // An empty packed run adds nothing: an empty list is no list, as on re-encoding.
                    message.fields[field.number] = items.isEmpty ? nil : .list(items)
                case let .map(keyType, mapValueType):
                    // The entry is a level of its own, as in the generated codec.
                    var entryReader = WireReader(buffer: try reader.readLengthDelimited(), options: WireDecodingOptions(maximumDepth: max(0, maximumDepth - depth - 1)))
                    var key = Self.defaultValue(.scalar(keyType))
                    var value = Self.defaultValue(mapValueType)
                    var entryUnknown = UnknownFields()
                    while let entryTag = try entryReader.nextTag() {
                        // A key or value with the wrong wire type is skipped, as the generated codec does.
                        switch (entryTag.fieldNumber, entryTag.wireType) {
                        case (1, Self.wireType(of: .scalar(keyType))):
                            key = try readEntryValue(&entryReader, type: .scalar(keyType), mapField: field.number, depth: depth)
                        case (2, Self.wireType(of: mapValueType)):
                            if case let .message(type) = mapValueType {
                                // A message value twice in one entry merges, as in the generated
                                // codec and protobuf's parsers; taken out while it merges, so
                                // the merge is in place.
                                var nested = DynamicMessage(type: type)
                                if case let .message(existing) = value { nested = existing }
                                value = .bool(false)
                                try decodeFields(try entryReader.readLengthDelimited(), into: &nested, depth: depth + 1)
                                value = .message(nested)
                            } else {
                                value = try readEntryValue(&entryReader, type: mapValueType, mapField: field.number, depth: depth)
                            }
                        default: try entryReader.skipField(entryTag, into: &entryUnknown)
                        }
                    }
                    // Entries are collected in wire order and put in key order once, after decoding.
                    var entries: [DynamicMapEntry] = []
                    if case let .map(existing)? = message.fields.removeValue(forKey: field.number) { entries = existing }
                    // What a merge of this message brought already counts as compacted: the
                    // threshold must not restart from nothing on every merge (quadratic).
                    if compactedMapSizes[field.number] == nil { compactedMapSizes[field.number] = entries.count }
                    entries.append(DynamicMapEntry(key: key, value: value))
                    // Entries of a key seen before are dropped as they pile up (the last wins),
                    // not only once decoding ends: a map of one key sent N times (two bytes an
                    // entry) held N entries of some hundred bytes each (found by review). At
                    // twice the size after the last compaction, so the work stays linear.
                    if entries.count > 2 * (compactedMapSizes[field.number] ?? 0) + 64 {
                        entries = try DynamicMapEntry.canonicalOrder(entries)
                        compactedMapSizes[field.number] = entries.count
                    }
                    message.fields[field.number] = .map(entries)
                }
            }
        } catch let error as DynamicCodecError {
            throw error
        } catch WireDecodingError.nestingTooDeep where isShallowAttempt {
            throw DynamicCodecError(Self.shallowLimitReached)
        } catch {
            throw DynamicCodecError("\(definition.name): \(error)")
        }
        if !unknown.isEmpty {
            // Appended in place: a message merged again and again (its field repeated on the
            // wire) must not copy what it holds each time.
            if message.unknownFields.isEmpty {
                message.unknownFields = unknown
            } else {
                message.unknownFields.append(contentsOf: unknown)
            }
        }
    }

    /// Puts every map of `message` and of the messages it holds in key order, the last entry
    /// for a key winning: once per decode, so repeated merges never re-sort.
    static func putMapsInOrder(_ message: inout DynamicMessage) throws(DynamicCodecError) {
        for number in Array(message.fields.keys) {
            guard var field = message.fields.removeValue(forKey: number) else { continue }
            switch field {
            case var .single(.message(nested)):
                try putMapsInOrder(&nested)
                field = .single(.message(nested))
            case var .list(items):
                for index in items.indices {
                    if case var .message(nested) = items[index] {
                        try putMapsInOrder(&nested)
                        items[index] = .message(nested)
                    }
                }
                field = .list(items)
            case var .map(entries):
                entries = try DynamicMapEntry.canonicalOrder(entries)
                for index in entries.indices {
                    if case var .message(nested) = entries[index].value {
                        try putMapsInOrder(&nested)
                        entries[index].value = .message(nested)
                    }
                }
                field = .map(entries)
            case .single:
                break
            }
            message.fields[number] = field
        }
    }

    /// A map entry's key or value: a string of invalid UTF-8 names the map field, as the
    /// generated codec does, not its place in the entry (1 or 2).
    private func readEntryValue(_ reader: inout WireReader, type: ValueType, mapField: Int, depth: Int) throws(DynamicCodecError) -> DynamicValue {
        guard case .scalar(.string) = type else { return try readValue(&reader, type: type, depth: depth) }
        do throws(WireDecodingError) {
            return .string(try reader.readString())
        } catch {
            if case .invalidUTF8 = error { throw DynamicCodecError("\(WireDecodingError.invalidUTF8(field: mapField))") }
            throw DynamicCodecError("\(error)")
        }
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
                var message = DynamicMessage(type: index)
                try decodeFields(try reader.readLengthDelimited(), into: &message, depth: depth + 1)
                return .message(message)
            case .timestamp(.millis):
                return .timestamp(millis: UnixMillisTimestampCodec.clamped(Int64(bitPattern: try reader.readVarint())))
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
