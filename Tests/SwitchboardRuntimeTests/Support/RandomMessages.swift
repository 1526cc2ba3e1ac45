import Foundation
import KitchenSink
import PeerSupport
import SignalChat
import SwitchboardRuntime

/// Random values biased toward edge cases (zero, extremes) and random messages built from them.
struct RandomMessages {
    var rng: SeededGenerator

    init(seed: UInt64) { rng = SeededGenerator(seed: seed) }

    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }

    mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) -> T {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: return 0
        case 1: return .max
        case 2: return .min
        case 3: return T.random(in: 0...127, using: &rng)
        default: return T.random(in: .min ... .max, using: &rng)
        }
    }

    mutating func double() -> Double {
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: return 0
        case 1: return -0.0
        case 2: return .infinity
        case 3: return -Double.greatestFiniteMagnitude
        case 4: return Double(Int.random(in: -1000...1000, using: &rng)) / 8
        default:
            // No NaN: its payload bits do not survive JSON ("NaN"), and NaN is not equal to itself.
            let value = Double(bitPattern: UInt64.random(in: 0 ... .max, using: &rng))
            return value.isNaN ? 1.5 : value
        }
    }

    mutating func float() -> Float {
        let value = Float(bitPattern: UInt32.random(in: 0 ... .max, using: &rng))
        return chance(30) ? 0 : (value.isNaN ? -Float.infinity : value)
    }

    mutating func string() -> String {
        let pieces = ["", "a", "hello", "é", "世界", "🎉", "\"quote\"", "back\\slash", "\n\t\r", "\u{0}\u{1F}", "\u{7F}", "Привет", "/path?q=1&r=2"]
        var result = ""
        for _ in 0..<Int.random(in: 0...4, using: &rng) { result += pieces.randomElement(using: &rng)! }
        return result
    }

    mutating func bytes() -> Data {
        Data((0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0 ... 255, using: &rng) })
    }

    /// Timestamps over protobuf's whole range (years 1 to 9999) with any nanoseconds: the
    /// value type keeps every one exactly.
    mutating func date() -> ProtoTimestamp {
        if chance(20) { return ProtoTimestamp() }
        if chance(20) { return chance(2) ? .minimum : .maximum }
        return ProtoTimestamp(seconds: Int64.random(in: RFC3339.minimumSeconds...RFC3339.maximumSeconds, using: &rng),
                              nanos: chance(4) ? 0 : Int32.random(in: 0..<1_000_000_000, using: &rng))
    }

    mutating func millisDate() -> Date {
        Date(timeIntervalSince1970: Double(Int64.random(in: -10_000_000_000_000 ... 10_000_000_000_000, using: &rng)) / 1000)
    }

    mutating func list<T>(_ make: (inout RandomMessages) -> T) -> [T] {
        var result: [T] = []
        for _ in 0..<Int.random(in: 0...5, using: &rng) { result.append(make(&self)) }
        return result
    }

    mutating func optional<T>(_ make: (inout RandomMessages) -> T) -> T? {
        chance(50) ? make(&self) : nil
    }

    mutating func color() -> Color {
        Color(rawValue: [0, 1, 2, 3, -1, 77, Int32.min].randomElement(using: &rng)!)
    }

    mutating func point() -> Point {
        Point(x: integer(), y: integer(), label: optional { $0.string() })
    }

    mutating func scalars() -> Scalars {
        var m = Scalars()
        m.boolValue = chance(50)
        m.int32Value = integer(); m.int64Value = integer(); m.uint32Value = integer(); m.uint64Value = integer()
        m.sint32Value = integer(); m.sint64Value = integer(); m.fixed32Value = integer(); m.fixed64Value = integer()
        m.sfixed32Value = integer(); m.sfixed64Value = integer()
        m.floatValue = float(); m.doubleValue = double(); m.stringValue = string(); m.bytesValue = bytes()
        m.optionalBool = optional { $0.chance(50) }
        m.optionalInt32 = optional { $0.integer() }
        m.optionalInt64 = optional { $0.integer() }
        m.optionalUint64 = optional { $0.integer() }
        m.optionalSint32 = optional { $0.integer() }
        m.optionalFixed64 = optional { $0.integer() }
        m.optionalFloat = optional { $0.float() }
        m.optionalDouble = optional { $0.double() }
        m.optionalString = optional { $0.string() }
        m.optionalBytes = optional { $0.bytes() }
        return m
    }

    mutating func lists() -> Lists {
        var m = Lists()
        m.bools = list { $0.chance(50) }
        m.int32s = list { $0.integer() }; m.int64s = list { $0.integer() }
        m.uint32s = list { $0.integer() }; m.uint64s = list { $0.integer() }
        m.sint32s = list { $0.integer() }; m.sint64s = list { $0.integer() }
        m.fixed32s = list { $0.integer() }; m.fixed64s = list { $0.integer() }
        m.sfixed32s = list { $0.integer() }; m.sfixed64s = list { $0.integer() }
        m.floats = list { $0.float() }; m.doubles = list { $0.double() }
        m.strings = list { $0.string() }; m.bytesList = list { $0.bytes() }
        m.colors = list { $0.color() }; m.points = list { $0.point() }
        m.times = list { $0.date() }; m.millisTimes = list { $0.millisDate() }
        return m
    }

    mutating func maps() -> Maps {
        var m = Maps()
        for _ in 0..<Int.random(in: 0...4, using: &rng) {
            m.stringToString[string()] = string()
            m.int32ToInt64[integer()] = integer()
            m.uint64ToBytes[integer()] = bytes()
            m.boolToDouble[chance(50)] = double()
            m.sint64ToColor[integer()] = color()
            m.fixed32ToPoint[integer()] = point()
            m.stringToTime[string()] = date()
        }
        return m
    }

    mutating func inner(depth: Int) -> Composite.Inner {
        var m = Composite.Inner()
        m.level = Composite.Inner.Level(rawValue: Int32.random(in: -1...3, using: &rng))
        if depth > 0 { m.children = list { $0.inner(depth: depth - 1) } }
        return m
    }

    mutating func composite() -> Composite {
        var m = Composite()
        m.title = string(); m.origin = point(); m.corner = optional { $0.point() }
        m.color = color(); m.optionalColor = optional { $0.color() }
        m.createdAt = date(); m.expiresAt = optional { $0.date() }; m.sentAtMillis = millisDate()
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: m.payload = .text(string())
        case 1: m.payload = .point(point())
        case 2: m.payload = .number(integer())
        case 3: m.payload = .shade(color())
        case 4: m.payload = .raw(bytes())
        default: m.payload = nil
        }
        m.snakeCaseField = string(); m.`class` = string(); m.`default` = integer(); m.self_ = chance(50)
        m.description_ = string(); m.farField = string(); m.maxField = integer()
        m.inner = optional { $0.inner(depth: 2) }
        return m
    }

    mutating func tree(depth: Int) -> TreeNode {
        var m = TreeNode()
        m.name = string()
        guard depth > 0 else { return m }
        m.parent = optional { $0.tree(depth: depth - 1) }
        m.children = list { $0.tree(depth: depth - 2) }
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: m.link = .next(tree(depth: depth - 1))
        case 1: m.link = .label(string())
        default: m.link = nil
        }
        return m
    }

    mutating func chain(depth: Int) -> Chain {
        var m = Chain(label: string())
        if depth > 0 && chance(80) { m.next = chain(depth: depth - 1) }
        return m
    }

    mutating func duration() -> ProtoDuration {
        if chance(20) { return ProtoDuration() }
        let seconds = Int64.random(in: -ProtoDuration.maximumSeconds...ProtoDuration.maximumSeconds, using: &rng)
        var nanos = chance(30) ? 0 : Int32.random(in: 0..<1_000_000_000, using: &rng)
        if seconds < 0 || (seconds == 0 && chance(50)) { nanos = -nanos }
        return ProtoDuration(seconds: seconds, nanos: nanos)
    }

    /// A JSON value of bounded depth; numbers finite, as JSON requires.
    mutating func jsonValue(depth: Int) -> ProtoValue {
        switch Int.random(in: 0..<(depth > 0 ? 6 : 4), using: &rng) {
        case 0: return .null
        case 1:
            let number = double()
            return ProtoValue(kind: .numberValue(number.isFinite ? number : 0))
        case 2: return ProtoValue(kind: .stringValue(string()))
        case 3: return ProtoValue(kind: .boolValue(chance(50)))
        case 4: return ProtoValue(kind: .structValue(jsonObject(depth: depth - 1)))
        default: return ProtoValue(kind: .listValue(ProtoListValue(values: list { $0.jsonValue(depth: depth - 1) })))
        }
    }

    mutating func jsonObject(depth: Int) -> ProtoStruct {
        ProtoStruct(fields: Dictionary(list { ($0.string(), $0.jsonValue(depth: depth)) }, uniquingKeysWith: { a, _ in a }))
    }

    /// Field mask paths that survive JSON's lowerCamelCase: lowercase words joined by `_` and `.`.
    mutating func fieldMask() -> ProtoFieldMask {
        ProtoFieldMask(paths: list { r in
            (0..<Int.random(in: 1...3, using: &r.rng)).map { _ in
                (0..<Int.random(in: 1...2, using: &r.rng)).map { _ in ["user", "display", "name", "photo", "x"].randomElement(using: &r.rng)! }.joined(separator: "_")
            }.joined(separator: ".")
        })
    }

    /// An Any holding a Point (registered with the AnyTypeRegistry), a Duration or a Value.
    mutating func anyMessage() -> ProtoAny {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return ProtoAny(packing: point())
        case 1: return ProtoAny(packing: duration())
        case 2: return ProtoAny(packing: jsonValue(depth: 1))
        default: return ProtoAny(packing: ProtoAny(packing: point()))
        }
    }

    mutating func wellKnown() -> WellKnown {
        var m = WellKnown()
        m.when = date(); m.duration = duration()
        m.doubleValue = optional { r in ProtoDoubleValue(r.double()) }
        m.floatValue = optional { r in ProtoFloatValue(r.float()) }
        m.int64Value = optional { r in ProtoInt64Value(r.integer()) }
        m.uint64Value = optional { r in ProtoUInt64Value(r.integer()) }
        m.int32Value = optional { r in ProtoInt32Value(r.integer()) }
        m.uint32Value = optional { r in ProtoUInt32Value(r.integer()) }
        m.boolValue = optional { r in ProtoBoolValue(r.chance(50)) }
        m.stringValue = optional { r in ProtoStringValue(r.string()) }
        m.bytesValue = optional { r in ProtoBytesValue(r.bytes()) }
        m.empty = optional { _ in ProtoEmpty() }
        m.mask = fieldMask()
        m.object = optional { $0.jsonObject(depth: 2) }
        m.value = optional { $0.jsonValue(depth: 2) }
        m.list = optional { r in ProtoListValue(values: r.list { $0.jsonValue(depth: 1) }) }
        m.anything = optional { $0.anyMessage() }
        m.durations = list { $0.duration() }
        m.values = list { $0.jsonValue(depth: 1) }
        m.wrappedByName = Dictionary(list { ($0.string(), ProtoInt32Value($0.integer())) }, uniquingKeysWith: { a, _ in a })
        m.timesByName = Dictionary(list { ($0.string(), $0.date()) }, uniquingKeysWith: { a, _ in a })
        m.anys = list { $0.anyMessage() }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: m.choice = .choiceValue(jsonValue(depth: 1))
        case 1: m.choice = .choiceNull(.nullValue)
        case 2: m.choice = .choiceDuration(duration())
        default: m.choice = nil
        }
        return m
    }

    mutating func chatMessage() -> ChatMessage {
        ChatMessage(
            id: string(), senderId: integer(), text: string(), status: MessageStatus(rawValue: Int32.random(in: 0...5, using: &rng)),
            createdAt: date(),
            attachments: list { r in Attachment(id: r.string(), contentType: r.string(), size: r.integer(), digest: r.bytes(), fileName: r.optional { $0.string() }) },
            extras: Dictionary(list { ($0.string(), $0.string()) }, uniquingKeysWith: { a, _ in a }),
            replyTo: optional { $0.string() },
            reactions: list { ChatMessage.Reaction(emoji: $0.string(), userIds: $0.list { $0.integer() }) },
            editedAt: optional { $0.date() })
    }

    mutating func webSocketMessage() -> WebSocketMessage {
        WebSocketMessage(
            type: optional { WebSocketMessage.TypeEnum(rawValue: Int32.random(in: 0...3, using: &$0.rng)) },
            request: optional { r in WebSocketRequestMessage(verb: r.optional { $0.string() }, path: r.optional { $0.string() }, body: r.optional { $0.bytes() }, headers: r.list { $0.string() }, id: r.optional { $0.integer() }) },
            response: optional { r in WebSocketResponseMessage(id: r.optional { $0.integer() }, status: r.optional { $0.integer() }, message: r.optional { $0.string() }, headers: r.list { $0.string() }, body: r.optional { $0.bytes() }) })
    }
}
