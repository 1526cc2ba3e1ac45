import Foundation
import KitchenSink
import SwitchboardRuntime
import TestMessagesProto3
import Testing

/// The well-known types' own JSON forms, case by case from protobuf's JSON mapping.
@Suite struct WellKnownTypesJSONTests {
    func json(_ message: WellKnown) throws -> String { try message.jsonString() }
    func read(_ text: String) throws -> WellKnown { try WellKnown(jsonString: text) }

    @Test func durationsAreSecondsWithAFractionOfThreeSixOrNineDigits() throws {
        let cases: [(Int64, Int32, String)] = [
            (1, 500_000_000, "1.500s"), (0, -1, "-0.000000001s"), (-3, -20_000, "-3.000020s"), (7, 0, "7s"),
            (ProtoDuration.maximumSeconds, 999_999_999, "315576000000.999999999s"),
        ]
        for (seconds, nanos, text) in cases {
            let message = WellKnown(duration: ProtoDuration(seconds: seconds, nanos: nanos))
            #expect(try json(message) == #"{"duration":"\#(text)"}"#)
            #expect(try read(#"{"duration":"\#(text)"}"#) == message)
        }
        #expect(try read(#"{"duration":"1.5s"}"#).duration == ProtoDuration(seconds: 1, nanos: 500_000_000))
        for bad in ["1", "1.s", ".5s", "1.5", "+1s", "1.0000000001s", "315576000001s", "1 s", "-s", "0x10s"] {
            #expect(throws: JSONDecodingError.self, "\(bad)") { try read(#"{"duration":"\#(bad)"}"#) }
        }
        for invalid in [ProtoDuration(seconds: 1, nanos: -1), ProtoDuration(seconds: ProtoDuration.maximumSeconds + 1, nanos: 0), ProtoDuration(seconds: 0, nanos: 1_000_000_000)] {
            #expect(throws: JSONEncodingError.durationOutOfRange(seconds: invalid.seconds, nanos: invalid.nanos)) { try json(WellKnown(duration: invalid)) }
        }
        #expect(ProtoDuration(.milliseconds(-1500)) == ProtoDuration(seconds: -1, nanos: -500_000_000))
        #expect(ProtoDuration(seconds: -1, nanos: -500_000_000).duration == .milliseconds(-1500))
    }

    @Test func wrappersAreBareValuesAndNullLeavesThemUnset() throws {
        let message = WellKnown(int64Value: ProtoInt64Value(-5), uint32Value: ProtoUInt32Value(0), boolValue: ProtoBoolValue(false),
                                stringValue: ProtoStringValue("hi"), bytesValue: ProtoBytesValue(Data([1, 2])))
        #expect(try json(message) == #"{"int64Value":"-5","uint32Value":0,"boolValue":false,"stringValue":"hi","bytesValue":"AQI="}"#)
        #expect(try read(#"{"int64Value":"-5","uint32Value":0,"boolValue":false,"stringValue":"hi","bytesValue":"AQI="}"#) == message)
        #expect(try read(#"{"int32Value":null,"doubleValue":"NaN"}"#).int32Value == nil)
        #expect(try read(#"{"doubleValue":"NaN"}"#).doubleValue?.value.isNaN == true)
        // A present wrapper with the default value is written, and survives the wire.
        #expect(try WellKnown(serializedBytes: message.serializedBytes()).uint32Value == ProtoUInt32Value(0))
    }

    @Test func structAndValueAreFreeJSON() throws {
        let text = #"{"object":{"a":[1,"two",true,null,{"b":{}}],"c":null},"value":null,"values":[null,2.5,[]],"list":[]}"#
        let message = try read(text)
        #expect(message.object?.fields["c"] == .null)
        #expect(message.value == .null, "null is a Value, not an unset field")
        #expect(message.values == [.null, ProtoValue(kind: .numberValue(2.5)), ProtoValue(kind: .listValue(ProtoListValue()))])
        #expect(message.list == ProtoListValue())
        #expect(try json(message) == #"{"object":{"a":[1,"two",true,null,{"b":{}}],"c":null},"value":null,"list":[],"values":[null,2.5,[]]}"#)
        #expect(throws: JSONEncodingError.self) { try json(WellKnown(value: ProtoValue(kind: .numberValue(.infinity)))) }
        #expect(throws: JSONEncodingError.self) { try json(WellKnown(value: ProtoValue())) }
        #expect(throws: JSONDecodingError.self) { try read(#"{"object":[1]}"#) }
        #expect(throws: JSONDecodingError.self) { try read(#"{"list":{}}"#) }
    }

    @Test func nullValueIsNullAndCountsInAOneof() throws {
        let message = try read(#"{"choiceNull":null}"#)
        #expect(message.choice == .choiceNull(.nullValue))
        #expect(try json(message) == #"{"choiceNull":null}"#)
        #expect(throws: JSONDecodingError.self) { try read(#"{"choiceNull":null,"choiceDuration":"1s"}"#) }
    }

    @Test func fieldMasksAreCamelCasedAndRefuseWhatCannotComeBack() throws {
        let message = WellKnown(mask: ProtoFieldMask(paths: "user.display_name", "photo"))
        #expect(try json(message) == #"{"mask":"user.displayName,photo"}"#)
        #expect(try read(#"{"mask":"user.displayName,photo"}"#) == message)
        #expect(try read(#"{"mask":""}"#).mask.paths.isEmpty)
        #expect(throws: JSONDecodingError.self) { try read(#"{"mask":"foo,bar_bar"}"#) }
        for path in ["fooBar", "foo__bar", "foo_", "foo_3"] {
            #expect(throws: JSONEncodingError.invalidFieldMaskPath(path)) { try json(WellKnown(mask: ProtoFieldMask(paths: path))) }
        }
    }

    /// A comma inside a path, or one empty path, would read back as other paths (from the
    /// review): refused like the other paths that cannot come back.
    @Test func fieldMaskPathsThatReadBackDifferentlyAreRefused() throws {
        for (paths, refused) in [(["a,b"], "a,b"), (["ok", "x,y"], "x,y"), ([""], "")] {
            #expect(throws: JSONEncodingError.invalidFieldMaskPath(refused), "\(paths)") {
                var writer = JSONWriter()
                try ProtoFieldMask(paths: paths).encodeJSON(into: &writer)
            }
        }
        // Empty paths among others do come back.
        for paths in [["", ""], ["a", ""]] {
            #expect(try read(json(WellKnown(mask: ProtoFieldMask(paths: paths)))).mask.paths == paths)
        }
    }

    /// Paths split at every comma, as protobuf's do, even one a combining mark follows (a
    /// `String` split on characters kept `a,\u{301}b` as one path, which could not be
    /// written back; from the review).
    @Test func fieldMaskPathsSplitAtEveryComma() throws {
        let decoded = try read(#"{"mask":"a,\u0301b"}"#)
        #expect(decoded.mask.paths == ["a", "\u{301}b"])
        #expect(try json(decoded) == "{\"mask\":\"a,\u{301}b\"}")
        #expect(try read(#"{"mask":"x,é,y"}"#).mask.paths == ["x", "é", "y"])
    }

    @Test func anyCarriesTypeAnywhereAndNestsWellKnownTypesUnderValue() throws {
        AnyTypeRegistry.shared.register(Point.self)
        let point = Point(x: 3, y: -4)
        let message = WellKnown(anything: ProtoAny(packing: point), anys: [ProtoAny(packing: ProtoDuration(seconds: 2, nanos: 0))])
        let text = try json(message)
        #expect(text == #"{"anything":{"@type":"type.googleapis.com/switchboard.test.Point","x":3,"y":-4},"anys":[{"@type":"type.googleapis.com/google.protobuf.Duration","value":"2s"}]}"#)
        #expect(try read(text) == message)
        // "@type" need not come first.
        #expect(try read(#"{"anything":{"x":3,"@type":"type.googleapis.com/switchboard.test.Point","y":-4}}"#).anything == ProtoAny(packing: point))
        #expect(try message.anything?.unpack(Point.self) == point)
        #expect(try message.anything?.unpack(ProtoDuration.self) == nil)
        #expect(throws: JSONDecodingError.self) { try read(#"{"anything":{"x":3}}"#) }
        #expect(throws: JSONDecodingError.self) { try read(#"{"anything":{"@type":"type.googleapis.com/nowhere.Unknown"}}"#) }
        #expect(throws: JSONEncodingError.self) { try json(WellKnown(anything: ProtoAny(typeUrl: "type.googleapis.com/nowhere.Unknown", value: Data()))) }
        // A registry of one's own is used instead of the shared one.
        var options = JSONDecodingOptions()
        options.anyTypes = AnyTypeRegistry()
        #expect(throws: JSONDecodingError.self) { try WellKnown(jsonString: text, options: options) }
    }

    /// `count` Anys inside one another around a Duration, built from the inside out in
    /// linear time (binary decoding does not open an Any's value, so any depth decodes).
    static func nestedAnys(_ count: Int) throws -> ProtoAny {
        func varint(_ value: Int) -> [UInt8] {
            var value = UInt64(value), bytes: [UInt8] = []
            while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
            return bytes + [UInt8(value)]
        }
        let url = Array("type.googleapis.com/google.protobuf.Any".utf8)
        var reversed = Array(ProtoAny(packing: ProtoDuration(seconds: 1, nanos: 0)).serializedBytes().reversed())
        for _ in 1..<count {
            let length = reversed.count
            reversed += varint(length).reversed() + [0x12] + url.reversed() + varint(url.count).reversed() + [0x0A]
        }
        return try ProtoAny(serializedBytes: Array(reversed.reversed()))
    }

    @Test func anysNestedPastTheLimitAreAnErrorNotAStackOverflow() throws {
        // From the input review: 20,000 levels (500 KB of binary) overflowed the stack.
        let deep = try Self.nestedAnys(20_000)
        #expect(throws: JSONEncodingError.self) { try json(WellKnown(anything: deep)) }
        let text = try json(WellKnown(anything: Self.nestedAnys(99)))
        #expect(text.components(separatedBy: "google.protobuf.Any").count - 1 == 98, "99 levels write")
        var writer = JSONWriter()
        writer.maximumAnyDepth = 10
        #expect(throws: JSONEncodingError.self) { try WellKnown(anything: Self.nestedAnys(11)).encodeJSON(into: &writer) }
    }

    /// `levels` Anys inside one another, each packing a TestAllTypesProto3 whose
    /// `recursive_message` nests `depth` deep around the next Any; built from the inside out
    /// in linear time, as binary.
    static func recursionInAnys(levels: Int, depth: Int) throws -> ProtoAny {
        func varint(_ value: Int) -> [UInt8] {
            var value = UInt64(value), bytes: [UInt8] = []
            while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
            return bytes + [UInt8(value)]
        }
        let url = Array(("type.googleapis.com/" + TestAllTypesProto3.protoMessageName).utf8)
        // recursive_message is field 27 and optional_any field 305, both length-delimited.
        let recursiveTag: [UInt8] = varint(27 << 3 | 2).reversed(), anyTag: [UInt8] = varint(305 << 3 | 2).reversed()
        var reversed: [UInt8] = []
        // Puts `tag` and the length of what is built so far in front of it.
        func wrap(in tag: [UInt8]) {
            let length = reversed.count
            reversed += varint(length).reversed() + tag
        }
        for level in 0..<levels {
            if level > 0 { wrap(in: anyTag) }
            for _ in 0..<depth { wrap(in: recursiveTag) }
            let length = reversed.count
            reversed += varint(length).reversed() + [0x12] + url.reversed() + varint(url.count).reversed() + [0x0A]
        }
        return try ProtoAny(serializedBytes: Array(reversed.reversed()))
    }

    /// Each Any's bytes were decoded with a fresh 100 levels, so 100 Anys of 98-deep messages
    /// recursed about 9,800 deep (from the review). The levels are now counted across Anys:
    /// past 100 objects and arrays writing fails, and what fits still writes.
    @Test func nestingIsBoundedAcrossAnys() throws {
        let registry = AnyTypeRegistry()
        registry.register(TestAllTypesProto3.self)
        func write(_ any: ProtoAny) throws(JSONEncodingError) -> [UInt8] {
            var writer = JSONWriter()
            writer.anyTypes = registry
            try any.encodeJSON(into: &writer)
            return writer.bytes
        }
        let tooDeep = try Self.recursionInAnys(levels: 100, depth: 98)
        do throws(JSONEncodingError) {
            _ = try write(tooDeep)
            Issue.record("100 Anys of 98 levels each must not write")
        } catch {
            guard case let .invalidAny(_, reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("deeper than 100"), "\(reason)")
        }
        // 99 levels in one Any, and two Anys of 40, fit within 100.
        let deepest = try write(Self.recursionInAnys(levels: 1, depth: 98))
        #expect(String(decoding: deepest, as: UTF8.self).components(separatedBy: "recursiveMessage").count - 1 == 98)
        let two = try write(Self.recursionInAnys(levels: 2, depth: 40))
        #expect(String(decoding: two, as: UTF8.self).components(separatedBy: "optionalAny").count - 1 == 1)
    }

    /// Type URLs name types byte for byte, as in protobuf: the registry's String keys also
    /// matched "\u{212A}" (the Kelvin sign) for "K".
    @Test func anyTypeNamesAreComparedByteForByte() throws {
        let registry = AnyTypeRegistry()
        registry.register(WellKnown.self)
        #expect(registry.type(forURL: "type.googleapis.com/switchboard.test.WellKnown").map { ObjectIdentifier($0) } == ObjectIdentifier(WellKnown.self))
        let kelvin = "type.googleapis.com/switchboard.test.Well\u{212A}nown"
        #expect(registry.type(forURL: kelvin) == nil)
        #expect(!ProtoAny(typeUrl: kelvin, value: Data()).holds(WellKnown.self))
        #expect(ProtoAny(packing: WellKnown()).holds(WellKnown.self))
    }

    @Test func timestampsKeepEveryNanosecondAndMergeLikeMessages() throws {
        let first = WellKnown(when: ProtoTimestamp(seconds: 5, nanos: 0)).serializedBytes()
        let second = WellKnown(when: ProtoTimestamp(seconds: 0, nanos: 7)).serializedBytes()
        // The second occurrence merges into the first: seconds from one, nanos from the other.
        #expect(try WellKnown(serializedBytes: first + second).when == ProtoTimestamp(seconds: 5, nanos: 7))
        let exact = ProtoTimestamp(seconds: -62_135_596_800, nanos: 999_999_999)
        #expect(try read(json(WellKnown(when: exact))).when == exact)
        #expect(ProtoTimestamp(date: Date(timeIntervalSince1970: 1.5)) == ProtoTimestamp(seconds: 1, nanos: 500_000_000))
        #expect(ProtoTimestamp(date: .distantFuture.addingTimeInterval(1e12)) == .maximum)
    }
}
