/// Text for a terminal, with what a server chose made harmless: an escape sequence in a
/// pushed path or a close reason could otherwise move the cursor, retitle the window or
/// hide earlier output.
package enum TerminalText {
    /// `text` with every control character escaped as `\uXXXX` (C0 but tab and line feed,
    /// DEL, C1) and so are the invisible bidirectional overrides that reorder what is shown.
    /// Inside a JSON string such an escape means the same character, so JSON stays valid.
    package static func sanitized(_ text: String) -> String { escape(text, keepingLineBreaks: true) }

    /// As ``sanitized(_:)``, and line breaks too: for one server-chosen value within a line,
    /// which must not start lines of its own.
    package static func inline(_ text: String) -> String { escape(text, keepingLineBreaks: false) }

    private static func escape(_ text: String, keepingLineBreaks: Bool) -> String {
        guard text.unicodeScalars.contains(where: { needsEscape($0, keepingLineBreaks: keepingLineBreaks) }) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            if needsEscape(scalar, keepingLineBreaks: keepingLineBreaks) {
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func needsEscape(_ scalar: Unicode.Scalar, keepingLineBreaks: Bool) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return !keepingLineBreaks
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Bidirectional embeddings, overrides and isolates.
        case 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}
