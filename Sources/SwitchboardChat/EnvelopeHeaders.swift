import Foundation
import SwitchboardRuntime

/// Headers travel in Signal's envelope as `name:value` lines.
enum EnvelopeHeaders {
    /// Adds the header of one line, which is valid UTF-8: split at the first colon and
    /// trimmed, as libsignal reads them. A line without a colon is dropped.
    static func add(line: UnsafeRawBufferPointer, to headers: inout RPCHeaders) {
        let bytes = line.assumingMemoryBound(to: UInt8.self)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        // Headers are nearly always ASCII: trim bytes, without stepping through scalars.
        if let name = trimmedASCII(bytes[..<colon]), let value = trimmedASCII(bytes[(colon + 1)...]) {
            headers.add(name, value)
            return
        }
        let text = String(decoding: bytes, as: UTF8.self)
        let split = text.utf8.index(text.utf8.startIndex, offsetBy: colon)
        headers.add(trimmed(text[..<split]), trimmed(text[text.utf8.index(after: split)...]))
    }

    /// `bytes` without leading and trailing spaces and tabs; `nil` when an end that is left
    /// is not ASCII, because a non-ASCII blank (U+00A0...) might need trimming there too.
    private static func trimmedASCII(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String? {
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        guard start == end || (bytes[start] < 0x80 && bytes[end - 1] < 0x80) else { return nil }
        let trimmed = UnsafeBufferPointer(rebasing: bytes[start..<end])
        return wellKnown(trimmed) ?? UTF8Validation.string(fromValid: UnsafeRawBufferPointer(trimmed))
    }

    /// Header text that nearly every message carries and that is too long to be a small
    /// (inline) string: shared, rather than allocated for each message.
    private static let wellKnownTexts: [(text: String, bytes: [UInt8])] =
        ["application/x-protobuf", "application/json", "X-Signal-Timestamp"].map { ($0, Array($0.utf8)) }

    private static func wellKnown(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard bytes.count > 15, let base = bytes.baseAddress else { return nil }
        for known in wellKnownTexts where known.bytes.count == bytes.count {
            if known.bytes.withUnsafeBufferPointer({ memcmp($0.baseAddress!, base, bytes.count) == 0 }) { return known.text }
        }
        return nil
    }

    /// `text` without leading and trailing blanks, as `CharacterSet.whitespaces` trims it;
    /// Foundation's trimming costs microseconds a header on Linux.
    static func trimmed(_ text: Substring) -> String {
        let scalars = text.unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, isBlank(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isBlank(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        return String(scalars[start..<end])
    }

    /// Exactly the scalars of `CharacterSet.whitespaces`: tab, the space separators, and U+200B.
    private static func isBlank(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x20, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }
}
