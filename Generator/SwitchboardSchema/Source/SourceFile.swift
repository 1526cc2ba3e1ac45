/// One schema file's text, with the line table diagnostics need.
public struct SourceFile: Sendable, Hashable {
    /// The path shown in diagnostics and generated headers, relative to the schema root.
    public let path: String
    /// The file's text.
    public let text: String
    /// The text as UTF-8, which the lexer scans.
    let utf8: [UInt8]
    /// Byte offsets at which each line starts.
    let lineStarts: [Int]

    /// Creates a source file from its display path and text.
    public init(path: String, text: String) {
        self.path = path
        self.text = text
        utf8 = Array(text.utf8)
        var starts = [0]
        for offset in utf8.indices where utf8[offset] == UInt8(ascii: "\n") {
            starts.append(offset + 1)
        }
        lineStarts = starts
    }

    /// The 0-based index of the line holding byte `offset` (a binary search).
    func lineIndex(of offset: Int) -> Int {
        let clamped = max(0, min(offset, utf8.count))
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if lineStarts[mid] <= clamped { low = mid } else { high = mid - 1 }
        }
        return low
    }

    /// How many blanks (spaces, tabs) start the line holding byte `offset`.
    func indentation(ofLineAt offset: Int) -> Int {
        var index = lineStarts[lineIndex(of: offset)]
        var count = 0
        while index < utf8.count, utf8[index] == UInt8(ascii: " ") || utf8[index] == UInt8(ascii: "\t") {
            count += 1
            index += 1
        }
        return count
    }

    /// The 1-based line and column (counted in Unicode scalars) of a byte offset.
    public func lineAndColumn(of offset: Int) -> (line: Int, column: Int) {
        let clamped = max(0, min(offset, utf8.count))
        let low = lineIndex(of: clamped)
        let prefix = utf8[lineStarts[low]..<clamped]
        let column = String(decoding: prefix, as: UTF8.self).unicodeScalars.count + 1
        return (low + 1, column)
    }

    /// The text of a 1-based line, without its newline.
    public func lineText(_ line: Int) -> String {
        guard line >= 1, line <= lineStarts.count else { return "" }
        let start = lineStarts[line - 1]
        var end = line < lineStarts.count ? lineStarts[line] - 1 : utf8.count
        if end > start, utf8[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return String(decoding: utf8[start..<max(start, end)], as: UTF8.self)
    }
}

/// A position in a schema file: the file's index in the load and a byte offset.
public struct SourceLocation: Sendable, Hashable, Comparable {
    /// Index of the file in the loaded ``SourceFile`` list.
    public let file: Int
    /// Byte offset into the file.
    public let offset: Int

    /// Creates a location.
    public init(file: Int, offset: Int) {
        self.file = file
        self.offset = offset
    }

    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.file, lhs.offset) < (rhs.file, rhs.offset)
    }
}
