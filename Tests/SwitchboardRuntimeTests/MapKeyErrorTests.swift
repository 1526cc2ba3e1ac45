import Foundation
import KitchenSink
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema
import Testing

/// A JSON map key that is not valid UTF-8 is an error in both codecs, never repaired into
/// U+FFFD; a key that does not spell the key type says so, not "invalid number".
@Suite struct MapKeyErrorTests {
    /// `{"stringToString": {"a<0xFF>": "x"}}`
    static let invalidUTF8Key = Data(#"{"stringToString": {"a"#.utf8) + Data([0xFF]) + Data(#"": "x"}}"#.utf8)

    @Test func theGeneratedCodecRejectsAKeyOfInvalidUTF8AsAString() {
        #expect { try Maps(jsonUTF8Bytes: Self.invalidUTF8Key) } throws: { error in
            if case .invalidString = error as? JSONDecodingError { return true }
            return false
        }
    }

    @Test func aKeyThatIsNotOfTheKeyTypeSaysSo() {
        #expect { try Maps(jsonString: #"{"int32ToInt64": {"seven": "1"}}"#) } throws: { error in
            guard case let .invalidMapKey(_, key) = error as? JSONDecodingError else { return false }
            return key == "seven" && "\(error)".contains("map key")
        }
        #expect { try Maps(jsonString: #"{"boolToDouble": {"yes": 1}}"#) } throws: { error in
            if case .invalidMapKey = error as? JSONDecodingError { return true }
            return false
        }
    }

    @Test func theDynamicCodecRejectsAKeyOfInvalidUTF8() throws {
        let schema = DynamicCodecAgreementTests.kitchenSink
        let maps = try #require(schema.messageIndex(named: "Maps"))
        #expect { try DynamicJSONCodec(schema: schema).decode(Self.invalidUTF8Key, as: maps) } throws: { error in
            "\(error)".contains("not valid UTF-8")
        }
    }

    /// A map key can be a phone number or a token, and error texts end up in logs: the
    /// descriptions give the key's size and place, the case keeps the key for code.
    @Test func errorTextsQuoteNoMapKeyAndAtMost64CharactersOfAName() throws {
        let secret = "+15551234567"
        let duplicate = #"{"stringToString": {"\#(secret)": "1", "\#(secret)": "2"}}"#
        #expect { try Maps(jsonString: duplicate) } throws: { error in
            guard case let .duplicateMapKey(_, key) = error as? JSONDecodingError else { return false }
            return key == secret && !"\(error)".contains(secret) && "\(error)".contains("12 bytes")
        }
        #expect { try Maps(jsonString: #"{"int32ToInt64": {"\#(secret)x": "1"}}"#) } throws: { error in
            !"\(error)".contains(secret) && "\(error)".contains("map key")
        }
        let longName = String(repeating: "n", count: 10_000)
        #expect { try Maps(jsonString: #"{"\#(longName)": 1}"#) } throws: { error in
            guard case let .unknownField(_, name) = error as? JSONDecodingError else { return false }
            return name == longName && "\(error)".count < 200 && "\(error)".contains(String(repeating: "n", count: 64) + "…")
        }
        let schema = DynamicCodecAgreementTests.kitchenSink
        let maps = try #require(schema.messageIndex(named: "Maps"))
        #expect { try DynamicJSONCodec(schema: schema).decode(Data(duplicate.utf8), as: maps) } throws: { error in
            !"\(error)".contains(secret) && "\(error)".contains("appears twice")
        }
        #expect { try DynamicJSONCodec(schema: schema).decode(Data(#"{"\#(longName)": 1}"#.utf8), as: maps) } throws: { error in
            "\(error)".count < 200
        }
    }
}
