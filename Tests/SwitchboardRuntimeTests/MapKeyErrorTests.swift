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
}
