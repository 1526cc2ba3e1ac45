import Foundation
@testable import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// Schema text that lands in comments (doc comments, file names) cannot end the comment and
/// put code in the generated file.
@Suite struct CommentSafetyTests {
    @Test func documentationAndHeadersStayComments() {
        let hostile = ["one\rlet injectedA = 1", "two\u{2028}let injectedB = 2", "three\u{2029}let injectedC = 3", "four\u{85}let injectedD = 4"]
        let property = SwiftProperty(documentation: hostile, access: "public", isStatic: true, isLet: true, name: "x", initializer: "1")
        let file = SwiftFile(path: "a.swift", header: ["from schema/a\nlet injectedE = 5.sb"], imports: [], declarations: [.property(property)])
        let text = SwiftRenderer().render(file)
        // Swift ends a line at each of these; none may be left.
        #expect(!text.unicodeScalars.contains { $0 == "\r" || $0 == "\u{2028}" || $0 == "\u{2029}" || $0 == "\u{85}" })
        for line in text.split(separator: "\n") where line.contains("injected") {
            let trimmed = line.drop { $0 == " " }
            #expect(trimmed.hasPrefix("//"), "\(line)")
        }
        #expect(text.components(separatedBy: "injected").count == 6, "every piece is still there, as comment text")
    }
}
