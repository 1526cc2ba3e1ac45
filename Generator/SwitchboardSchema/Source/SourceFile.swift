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
    /// The Unicode scalars before every ``scalarCheckpointStride``-th byte: a column is
    /// counted from the checkpoints, not from its line's start, so a diagnostic on a line of
    /// megabytes (a hostile one-line file) costs a bounded scan, not the line's length.
    let scalarCheckpoints: [Int]
    static let scalarCheckpointStride = 4096

    /// Creates a source file from its display path and text.
    public init(path: String, text: String) {
        self.path = path
        self.text = text
        let utf8 = Array(text.utf8)
        self.utf8 = utf8
        // A byte-order mark is not a column: the first line starts after it.
        var starts = [utf8.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0]
        var checkpoints: [Int] = []
        checkpoints.reserveCapacity(utf8.count / Self.scalarCheckpointStride + 1)
        var scalars = 0
        // Through a buffer pointer: a debug build (what `swift run` makes) retained and
        // released the array at each subscript, a few times per byte of the schema.
        utf8.withUnsafeBufferPointer { bytes in
            // A line ends at LF, CR LF, or a lone CR (old Mac files).
            for offset in bytes.indices {
                if offset % Self.scalarCheckpointStride == 0 { checkpoints.append(scalars) }
                let byte = bytes[offset]
                if byte & 0xC0 != 0x80 { scalars += 1 }
                if byte == UInt8(ascii: "\n") || (byte == UInt8(ascii: "\r") && (offset + 1 == bytes.count || bytes[offset + 1] != UInt8(ascii: "\n"))) {
                    starts.append(offset + 1)
                }
            }
        }
        // A checkpoint for the end too, when it falls on a stride (an empty file's 0).
        if utf8.count % Self.scalarCheckpointStride == 0 { checkpoints.append(scalars) }
        lineStarts = starts
        scalarCheckpoints = checkpoints
    }

    /// The Unicode scalars before byte `offset` (at most `utf8.count`).
    func scalarsBefore(_ offset: Int) -> Int {
        let checkpoint = offset / Self.scalarCheckpointStride
        return scalarCheckpoints[checkpoint] + Self.scalarCount(utf8, from: checkpoint * Self.scalarCheckpointStride, to: offset)
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
        return (low + 1, max(1, scalarsBefore(clamped) - scalarsBefore(lineStarts[low]) + 1))
    }

    /// The Unicode scalars in `bytes[start..<end]`, counted by their lead bytes: no string is
    /// made, so a diagnostic on a long line costs a byte scan, not a decoding.
    static func scalarCount(_ bytes: [UInt8], from start: Int, to end: Int) -> Int {
        var count = 0
        var index = start
        while index < end {
            if bytes[index] & 0xC0 != 0x80 { count += 1 }
            index += 1
        }
        return count
    }

    /// The byte offset `scalars` Unicode scalars before (negative) or after `offset` on its
    /// line, stopping at the line's ends.
    func offset(_ offset: Int, movedBy scalars: Int, within line: Range<Int>) -> Int {
        var index = offset
        var left = abs(scalars)
        if scalars < 0 {
            while left > 0, index > line.lowerBound {
                index -= 1
                while index > line.lowerBound, utf8[index] & 0xC0 == 0x80 { index -= 1 }
                left -= 1
            }
        } else {
            while left > 0, index < line.upperBound {
                index += 1
                while index < line.upperBound, utf8[index] & 0xC0 == 0x80 { index += 1 }
                left -= 1
            }
        }
        return index
    }

    /// The byte range of a 1-based line, without its line ending.
    func lineRange(_ line: Int) -> Range<Int> {
        guard line >= 1, line <= lineStarts.count else { return 0..<0 }
        let start = lineStarts[line - 1]
        // The next line starts after this one's terminator (LF, or a lone CR); a CR before
        // an LF is the line's ending too.
        var end = line < lineStarts.count ? lineStarts[line] - 1 : utf8.count
        if end > start, utf8[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        return start..<max(start, end)
    }

    /// The text of a 1-based line, without its newline.
    public func lineText(_ line: Int) -> String {
        String(decoding: utf8[lineRange(line)], as: UTF8.self)
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
