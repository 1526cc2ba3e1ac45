import Foundation
import KitchenSink
import SwitchboardRuntime
import Testing

/// The name table generated messages decode their JSON members through.
@Suite struct JSONFieldNamesTests {
    /// The position `names` gives the member name `quoted` (JSON text, with its quotes).
    func position(_ names: JSONFieldNames, _ quoted: String) throws -> Int? {
        var bytes = Array(quoted.utf8)
        return try bytes.withUnsafeMutableBytes { buffer throws -> Int? in
            var reader = JSONReader(buffer: UnsafeRawBufferPointer(buffer))
            return names.position(of: try reader.readName())
        }
    }

    @Test func bothNamesOfAFieldGiveItsPosition() throws {
        let names = JSONFieldNames(message: "demo.M", fields: "id createdAt\tcreated_at flags")
        #expect(names.messageName == "demo.M")
        #expect(names.fieldCount == 3)
        #expect(try position(names, #""id""#) == 0)
        #expect(try position(names, #""createdAt""#) == 1)
        #expect(try position(names, #""created_at""#) == 1)
        #expect(try position(names, #""flags""#) == 2)
        // Escaped spellings of a name are the same name.
        #expect(try position(names, #""cre\u0061ted_at""#) == 1)
        for other in [#""""#, #""i""#, #""idd""#, #""Id""#, #""createdat""#, #""flags ""#] {
            #expect(try position(names, other) == nil, "\(other)")
        }
        let empty = JSONFieldNames(message: "demo.Empty", fields: "")
        #expect(empty.fieldCount == 0)
        #expect(try position(empty, #""id""#) == nil)
    }

    /// Enough names that the table's slots collide: each still finds its own field.
    @Test func everyNameOfALargeMessageIsFound() throws {
        let fields = (0..<300).map { "field\($0)" + ($0 % 3 == 0 ? "\tfield_\($0)" : "") }.joined(separator: " ")
        let names = JSONFieldNames(message: "demo.Large", fields: fields)
        #expect(names.fieldCount == 300)
        for index in 0..<300 {
            #expect(try position(names, "\"field\(index)\"") == index)
            if index % 3 == 0 { #expect(try position(names, "\"field_\(index)\"") == index) }
            else { #expect(try position(names, "\"field_\(index)\"") == nil) }
        }
        #expect(try position(names, #""field300""#) == nil)
    }

    /// Generated decoding through the table: both names, escapes, unknown members.
    @Test func generatedMessagesDecodeThroughIt() throws {
        #expect(try Composite(jsonString: #"{"snake_case_field":"a"}"#).snakeCaseField == "a")
        #expect(try Composite(jsonString: #"{"snakeCaseField":"a"}"#).snakeCaseField == "a")
        #expect(try Composite(jsonString: #"{"t\u0069tle":"b"}"#).title == "b")
        #expect(throws: JSONDecodingError.unknownField(message: "switchboard.test.Composite", name: "nope")) {
            try Composite(jsonString: #"{"nope":1}"#)
        }
        var options = JSONDecodingOptions()
        options.ignoreUnknownFields = true
        #expect(try Composite(jsonString: #"{"nope":{"x":[1]},"title":"c"}"#, options: options).title == "c")
    }
}
