import Foundation
import PeerSupport
@testable import SwitchboardChat
import SwitchboardRuntime
import Testing

/// Header lines are trimmed as Foundation's `.whitespaces` trims them, without Foundation.
@Suite struct EnvelopeHeadersTests {
    @Test func trimmingAgreesWithFoundation() {
        let pieces = ["", " ", "\t", "\u{00A0}", "\u{3000}", "\u{2009}", "\n", "\r", "a", "é", "x y", "😀", ":", "\u{200B}", "\u{1680}", "\u{202F}", "\u{205F}", "\u{200C}", "\u{180E}", "\u{FEFF}", "\u{0B}"]
        var generator = SeededGenerator(seed: 0x5EED0008)
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            #expect(EnvelopeHeaders.trimmed(text[...]) == text.trimmingCharacters(in: .whitespaces), "\(Array(text.unicodeScalars))")
        }
    }

    @Test func linesSplitAtTheFirstColon() {
        let headers = EnvelopeHeaders.decode(["Content-Type: application/x-protobuf", "X-Odd :a:b ", "no colon", "\tEmpty:"])
        #expect(headers["content-type"] == "application/x-protobuf")
        #expect(headers["X-Odd"] == "a:b")
        #expect(headers["Empty"] == "")
        #expect(headers.fields.count == 3)
    }

    @Test func decodingAgreesWithFoundationSplitAndTrim() {
        let pieces = ["", " ", "\t", "\u{00A0}", "\u{3000}", "a", "é", "x y", "😀", ":", "\u{200B}", "K", "-"]
        var generator = SeededGenerator(seed: 0x5EED0009)
        for _ in 0..<2000 {
            let line = (0..<Int.random(in: 0...8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let decoded = EnvelopeHeaders.decode([line]).fields
            guard let colon = line.firstIndex(of: ":") else {
                #expect(decoded.isEmpty, "\(Array(line.unicodeScalars))")
                continue
            }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            #expect(decoded.count == 1 && decoded.first?.name == name && decoded.first?.value == value, "\(Array(line.unicodeScalars))")
        }
    }
}

extension EnvelopeHeaders {
    /// The headers of `lines`, each read as the chat layer reads a received line; the tests'
    /// reference for what the generated envelope's `[String]` of lines means.
    static func decode(_ lines: [String]) -> RPCHeaders {
        var headers = RPCHeaders()
        for var line in lines {
            line.withUTF8 { add(line: UnsafeRawBufferPointer($0), to: &headers) }
        }
        return headers
    }
}
