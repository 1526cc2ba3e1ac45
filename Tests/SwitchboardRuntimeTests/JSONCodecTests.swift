import Foundation
import KitchenSink
import SignalChat
import SwitchboardRuntime
import Testing

/// The canonical protobuf JSON mapping.
@Suite struct JSONCodecTests {
    @Test func writesCanonicalForms() throws {
        var scalars = Scalars()
        scalars.int64Value = -5
        scalars.uint64Value = 18_446_744_073_709_551_615
        scalars.int32Value = 7
        scalars.bytesValue = Data([0xFB, 0xFF])
        scalars.doubleValue = .infinity
        scalars.floatValue = .nan
        scalars.stringValue = "a\"b\\c\n\u{1}é"
        #expect(try scalars.jsonString() == #"{"int32Value":7,"int64Value":"-5","uint64Value":"18446744073709551615","floatValue":"NaN","doubleValue":"Infinity","stringValue":"a\"b\\c\n\u0001é","bytesValue":"+/8="}"#)
    }

    @Test func writesEnumsByNameAndOmitsDefaults() throws {
        #expect(try Composite(color: .green).jsonString() == #"{"color":"GREEN"}"#)
        #expect(try Composite().jsonString() == "{}")
        // Explicit presence writes a set default.
        #expect(try Composite(optionalColor: .unspecified).jsonString() == #"{"optionalColor":"COLOR_UNSPECIFIED"}"#)
    }

    @Test func writesTimestampsInRFC3339() throws {
        let composite = Composite(createdAt: ProtoTimestamp(seconds: 1_600_000_000, nanos: 500_000_000), sentAtMillis: Date(timeIntervalSince1970: 1.25))
        #expect(try composite.jsonString() == #"{"createdAt":"2020-09-13T12:26:40.500Z","sentAtMillis":"1250"}"#)
        let beforeEpoch = Composite(createdAt: ProtoTimestamp(date: Date(timeIntervalSince1970: -1.000001)))
        #expect(try beforeEpoch.jsonString() == #"{"createdAt":"1969-12-31T23:59:58.999999Z"}"#)
        // Every nanosecond survives, at both ends of the range.
        #expect(try Composite(createdAt: .maximum).jsonString() == #"{"createdAt":"9999-12-31T23:59:59.999999999Z"}"#)
        #expect(try Composite(createdAt: ProtoTimestamp(seconds: RFC3339.minimumSeconds, nanos: 1)).jsonString() == #"{"createdAt":"0001-01-01T00:00:00.000000001Z"}"#)
        for invalid in [ProtoTimestamp(seconds: RFC3339.maximumSeconds + 1, nanos: 0), ProtoTimestamp(seconds: RFC3339.minimumSeconds - 1, nanos: 0),
                        ProtoTimestamp(seconds: 0, nanos: -1), ProtoTimestamp(seconds: 0, nanos: 1_000_000_000)] {
            #expect(throws: JSONEncodingError.timestampOutOfRange(secondsSince1970: invalid.seconds)) { try Composite(createdAt: invalid).jsonString() }
        }
    }

    @Test func readsOriginalNamesAndJSONNames() throws {
        let a = try Composite(jsonString: #"{"snake_case_field":"x"}"#)
        let b = try Composite(jsonString: #"{"snakeCaseField":"x"}"#)
        #expect(a == b && a.snakeCaseField == "x")
        let keywords = try Composite(jsonString: #"{"class":"c","default":3,"self":true,"description":"d"}"#)
        #expect(keywords.`class` == "c" && keywords.`default` == 3 && keywords.self_ && keywords.description_ == "d")
    }

    @Test func readsEnumsByNameOrNumber() throws {
        #expect(try Composite(jsonString: #"{"color":"BLUE"}"#).color == .blue)
        #expect(try Composite(jsonString: #"{"color":3}"#).color == .blue)
        #expect(try Composite(jsonString: #"{"color":-1}"#).color == .infrared)
        #expect(try Composite(jsonString: #"{"color":12345}"#).color == .unrecognized(12345))
        #expect(throws: JSONDecodingError.unknownEnumName(enum: "Color", name: "PURPLE")) {
            try Composite(jsonString: #"{"color":"PURPLE"}"#)
        }
        let ignoring = JSONDecodingOptions(ignoreUnknownFields: true)
        #expect(try Composite(jsonString: #"{"color":"PURPLE","title":"t"}"#, options: ignoring) == Composite(title: "t"))
        #expect(try Lists(jsonString: #"{"colors":["RED","PURPLE","BLUE"]}"#, options: ignoring).colors == [.red, .blue])
    }

    @Test func unknownFieldsFailUnlessIgnored() throws {
        #expect(throws: JSONDecodingError.unknownField(message: "switchboard.test.Point", name: "z")) {
            try Point(jsonString: #"{"x":1,"z":{"deep":[1,2,{"a":null}]}}"#)
        }
        let point = try Point(jsonString: #"{"x":1,"z":{"deep":[1,2,{"a":null}]},"y":2}"#, options: JSONDecodingOptions(ignoreUnknownFields: true))
        #expect(point == Point(x: 1, y: 2))
    }

    @Test func acceptsNumbersInEveryLegalSpelling() throws {
        let scalars = try Scalars(jsonString: #"{"int32Value":"12","int64Value":34,"uint32Value":1e3,"uint64Value":"18446744073709551615","doubleValue":"-1.5","floatValue":2.5e0,"sint64Value":"-9223372036854775808"}"#)
        #expect(scalars.int32Value == 12)
        #expect(scalars.int64Value == 34)
        #expect(scalars.uint32Value == 1000)
        #expect(scalars.uint64Value == .max)
        #expect(scalars.doubleValue == -1.5)
        #expect(scalars.floatValue == 2.5)
        #expect(scalars.sint64Value == .min)
        let special = try Scalars(jsonString: #"{"doubleValue":"-Infinity","floatValue":"NaN"}"#)
        #expect(special.doubleValue == -.infinity && special.floatValue.isNaN)
    }

    @Test func rejectsNumbersThatDoNotFit() {
        for json in [#"{"int32Value":2147483648}"#, #"{"int32Value":1.5}"#, #"{"uint32Value":-1}"#,
                     #"{"uint64Value":"18446744073709551616"}"#, #"{"int64Value":"1 "}"#, #"{"int32Value":01}"#,
                     #"{"floatValue":1e39}"#, #"{"doubleValue":1e400}"#, #"{"int32Value":"0x10"}"#, #"{"int32Value":-}"#] {
            #expect(throws: JSONDecodingError.self, "\(json)") { try Scalars(jsonString: json) }
        }
    }

    @Test func readsBase64InBothAlphabetsWithOrWithoutPadding() throws {
        let expected = Data([0xFB, 0xFF, 0x01])
        for text in ["+/8B", "-_8B", "+/8B", "+/8"] {
            let data = Data([0xFB, 0xFF] + (text == "+/8" ? [] : [0x01]))
            #expect(try Scalars(jsonString: #"{"bytesValue":"\#(text)"}"#).bytesValue == data)
        }
        #expect(try Scalars(jsonString: #"{"bytesValue":"+/8="}"#).bytesValue == Data([0xFB, 0xFF]))
        #expect(throws: JSONDecodingError.self) { try Scalars(jsonString: #"{"bytesValue":"***"}"#) }
        #expect(throws: JSONDecodingError.self) { try Scalars(jsonString: #"{"bytesValue":"A"}"#) }
        _ = expected
    }

    @Test func readsTimestampsWithOffsets() throws {
        let utc = try Composite(jsonString: #"{"createdAt":"2020-09-13T12:26:40.5Z"}"#)
        let offset = try Composite(jsonString: #"{"createdAt":"2020-09-13T14:26:40.500+02:00"}"#)
        #expect(utc.createdAt == offset.createdAt)
        #expect(utc.createdAt == ProtoTimestamp(seconds: 1_600_000_000, nanos: 500_000_000))
        #expect(utc.createdAt.date == Date(timeIntervalSince1970: 1_600_000_000.5))
        for bad in ["2020-13-01T00:00:00Z", "2020-02-30T00:00:00Z", "2020-09-13 12:26:40Z", "2020-09-13T12:26:40", "10000-01-01T00:00:00Z", "2020-09-13T12:26:40.1234567891Z",
                    "2020-09-13t12:26:40Z", "2020-09-13T12:26:40z"] {
            #expect(throws: JSONDecodingError.self, "\(bad)") { try Composite(jsonString: #"{"createdAt":"\#(bad)"}"#) }
        }
    }

    @Test func nullMeansDefault() throws {
        let composite = try Composite(jsonString: #"{"title":null,"corner":null,"text":null,"origin":null,"expiresAt":null}"#)
        #expect(composite == Composite())
        let lists = try Lists(jsonString: #"{"int32s":null,"points":[{"x":1}]}"#)
        #expect(lists.int32s.isEmpty && lists.points == [Point(x: 1)])
    }

    /// protobuf has no null inside a list or as a map value: an error, not a skipped element.
    @Test func nullInsideAListOrAsAMapValueIsAnError() {
        #expect(throws: JSONDecodingError.nullInContainer(offset: 20)) { try Lists(jsonString: #"{"points":[{"x":1}, null]}"#) }
        #expect(throws: JSONDecodingError.nullInContainer(offset: 11)) { try Lists(jsonString: #"{"int32s":[null]}"#) }
        #expect(throws: JSONDecodingError.nullInContainer(offset: 23)) { try Maps(jsonString: #"{"stringToString":{"a":null}}"#) }
        #expect(throws: JSONDecodingError.nullInContainer(offset: 23)) { try Maps(jsonString: #"{"fixed32ToPoint":{"1":null}}"#) }
    }

    /// An integer written with a fraction or an exponent is read only below 2^53, where a
    /// double holds it exactly, as protobuf's C++ parser does (from the input review: larger
    /// ones came back silently rounded).
    @Test func integersInExponentFormAreExactOrRefused() throws {
        #expect(try Scalars(jsonString: #"{"int64Value": 1e5, "uint64Value": "2.0e3"}"#) == Scalars(int64Value: 100_000, uint64Value: 2000))
        #expect(try Scalars(jsonString: #"{"int64Value": 9007199254740991e0}"#).int64Value == 9_007_199_254_740_991)
        #expect(try Scalars(jsonString: #"{"int64Value": 1234567890123456789}"#).int64Value == 1_234_567_890_123_456_789, "plain digits stay exact")
        for bad in [#"{"int64Value": 1234567890123456789e0}"#, #"{"uint64Value": "9007199254740993e0"}"#, #"{"int64Value": -1.8e19}"#] {
            #expect(throws: JSONDecodingError.self, "\(bad)") { try Scalars(jsonString: bad) }
        }
    }

    /// A map key twice in one object is an error, as in protobuf's C++ and Python parsers (it
    /// was a silent last-wins); the same key merged into a map that holds it is not.
    @Test func aRepeatedMapKeyIsAnError() throws {
        #expect(throws: JSONDecodingError.duplicateMapKey(offset: 26, key: "a")) { try Maps(jsonString: #"{"stringToString":{"a":"1","a":"2"}}"#) }
        #expect(throws: JSONDecodingError.duplicateMapKey(offset: 25, key: "7")) { try Maps(jsonString: #"{"fixed32ToPoint":{"7":{},"7":{"x":1}}}"#) }
        #expect(try Maps(jsonString: #"{"stringToString":{"a":"1","b":"2"}}"#).stringToString == ["a": "1", "b": "2"])
        func merge(_ text: String, into message: inout Maps) throws {
            let bytes = Array(text.utf8)
            try bytes.withUnsafeBytes { buffer in
                var reader = JSONReader(buffer: buffer)
                try message.decodeJSON(from: &reader)
            }
        }
        var merged = Maps(stringToString: ["a": "0"])
        try merge(#"{"stringToString":{"a":"1","b":"2"}}"#, into: &merged)
        #expect(merged.stringToString == ["a": "1", "b": "2"], "a key the map held before is replaced")
        #expect(throws: JSONDecodingError.self) { try merge(#"{"stringToString":{"b":"3","b":"4"}}"#, into: &merged) }
    }

    /// A member named twice (by either of its names) is an error, as in protobuf's parsers,
    /// not a silent overwrite; so is a second oneof member with a value.
    @Test func aRepeatedMemberIsAnError() {
        let duplicate = { (name: String) in JSONDecodingError.duplicateField(message: "switchboard.test.Composite", name: name) }
        #expect(throws: duplicate("title")) { try Composite(jsonString: #"{"title":"a","title":"b"}"#) }
        #expect(throws: duplicate("title")) { try Composite(jsonString: #"{"title":null,"title":"b"}"#) }
        #expect(throws: duplicate("snake_case_field")) { try Composite(jsonString: #"{"snakeCaseField":"a","snake_case_field":"b"}"#) }
        #expect(throws: JSONDecodingError.duplicateField(message: "switchboard.test.Lists", name: "int32s")) {
            try Lists(jsonString: #"{"int32s":[1],"int32s":[2]}"#)
        }
        #expect(throws: JSONDecodingError.duplicateField(message: "switchboard.test.Maps", name: "stringToString")) {
            try Maps(jsonString: #"{"stringToString":{},"stringToString":{}}"#)
        }
    }

    @Test func mapsUseStringKeys() throws {
        var maps = Maps()
        maps.int32ToInt64 = [-1: 5, 2: -6]
        maps.boolToDouble = [true: 0.5, false: 1]
        maps.stringToString = ["b": "2", "a": "1"]
        #expect(try maps.jsonString() == #"{"stringToString":{"a":"1","b":"2"},"int32ToInt64":{"-1":"5","2":"-6"},"boolToDouble":{"false":1,"true":0.5}}"#)
        #expect(try Maps(jsonString: try maps.jsonString()) == maps)
        #expect(throws: JSONDecodingError.self) { try Maps(jsonString: #"{"int32ToInt64":{"x":"1"}}"#) }
    }

    @Test func escapesAndUnicodeEscapesDecode() throws {
        let point = try Point(jsonString: #"{"label":"\u00e9\ud83c\udf89\n\"\/"}"#)
        #expect(point.label == "é🎉\n\"/")
        let escapedKey = try Point(jsonString: #"{"l\u0061bel":"k"}"#)
        #expect(escapedKey.label == "k")
    }

    @Test func aOneofTakesOneMember() throws {
        #expect(try Composite(jsonString: #"{"point":{"x":1}}"#).payload == .point(Point(x: 1)))
        // Two members with values are an error; a null member sets nothing, so does not count.
        #expect(throws: JSONDecodingError.oneofConflict(message: "switchboard.test.Composite", name: "number")) {
            try Composite(jsonString: #"{"text":"a","number":"5"}"#)
        }
        #expect(try Composite(jsonString: #"{"text":null,"number":"5"}"#).payload == .number(5))
        #expect(try Composite(jsonString: #"{"number":"5","text":null}"#).payload == .number(5))
    }

    /// Strings are scanned eight bytes at a time up to the first quote, backslash or control
    /// character: each of them, and non-ASCII text (whose bytes are above 0x7F), at every
    /// offset in and around a word, reads as the same string the generated writer wrote.
    @Test func stringsReadTheSameWhateverStandsAtEveryOffset() throws {
        for length in 0...26 {
            for position in 0...length {
                for special in ["\"", "\\", "\n", "\u{1}", "é", "👋", "\u{7F}", " "] {
                    var characters = Array(repeating: Character("a"), count: length)
                    characters.insert(Character(special), at: position)
                    let text = String(characters)
                    var message = Scalars()
                    message.stringValue = text
                    let json = try message.jsonString()
                    #expect(!json.utf8.contains { $0 < 0x20 }, "a control character written raw: \(json)")
                    #expect(try Scalars(jsonString: json).stringValue == text, "\(json)")
                }
                // A raw control character inside a string is refused at any offset.
                var raw = Array(#"{"stringValue":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: length)
                raw.insert(0x09, at: raw.count - length + position)
                raw += Array(#""}"#.utf8)
                #expect(throws: JSONDecodingError.self) { try Scalars(jsonUTF8Bytes: raw) }
            }
        }
    }
}
