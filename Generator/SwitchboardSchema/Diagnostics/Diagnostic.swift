/// A problem found in a schema, located precisely enough to print a caret under it.
public struct Diagnostic: Sendable, Hashable {
    /// How serious the problem is.
    public enum Severity: String, Sendable, Hashable {
        case error
        case warning
        case note
    }

    /// How serious the problem is.
    public let severity: Severity
    /// The stable kind of the problem.
    public let code: DiagnosticCode
    /// A one-line explanation.
    public let message: String
    /// Where the problem is; `nil` for problems with no position (an empty schema directory).
    public let location: SourceLocation?

    /// Creates a diagnostic.
    public init(_ severity: Severity, _ code: DiagnosticCode, _ message: String, at location: SourceLocation?) {
        self.severity = severity
        self.code = code
        self.message = message
        self.location = location
    }
}

/// Collects diagnostics from every stage, so one run reports as many problems as it can find.
public struct DiagnosticCollector: Sendable {
    /// The diagnostics so far, in the order they were found: at most ``maximumCount``.
    public private(set) var diagnostics: [Diagnostic] = []
    /// How many errors were reported, kept or not.
    public private(set) var errorCount = 0

    /// The most diagnostics kept: 1,000. Input that breaks every line cannot make the
    /// output (or the memory) grow past that; the first ones are the ones to fix.
    public static let maximumCount = 1000

    /// Creates an empty collector.
    public init() {}

    /// Whether any error (not warning) was reported.
    public var hasErrors: Bool { errorCount > 0 }

    /// Whether further diagnostics are counted but not kept: a message costly to make (one
    /// that names another place) need not be made.
    public var isFull: Bool { diagnostics.count >= Self.maximumCount - 1 }

    /// Reports an error.
    public mutating func error(_ code: DiagnosticCode, _ message: String, at location: SourceLocation?) {
        add(Diagnostic(.error, code, message, at: location))
    }

    /// Reports a warning.
    public mutating func warning(_ code: DiagnosticCode, _ message: String, at location: SourceLocation?) {
        add(Diagnostic(.warning, code, message, at: location))
    }

    /// Adds diagnostics found elsewhere.
    public mutating func append(contentsOf other: [Diagnostic]) {
        for diagnostic in other { add(diagnostic) }
    }

    private mutating func add(_ diagnostic: Diagnostic) {
        if diagnostic.severity == .error { errorCount += 1 }
        guard diagnostics.count < Self.maximumCount else { return }
        if diagnostics.count == Self.maximumCount - 1 {
            // The last place says that the list stops here. A note: many warnings are no error,
            // and errors past the cap are counted (above) all the same.
            diagnostics.append(Diagnostic(.note, .tooManyDiagnostics, "more than \(Self.maximumCount - 1) problems; only the first ones are shown", at: nil))
            return
        }
        diagnostics.append(diagnostic)
    }

    /// The diagnostics sorted by file and position, so output does not depend on check order.
    public var sorted: [Diagnostic] {
        diagnostics.enumerated().sorted { lhs, rhs in
            let l = lhs.element.location ?? SourceLocation(file: -1, offset: -1)
            let r = rhs.element.location ?? SourceLocation(file: -1, offset: -1)
            return l == r ? lhs.offset < rhs.offset : l < r
        }.map(\.element)
    }
}

/// Renders diagnostics the way compilers do:
/// `file:line:column: error: message [code]`, the source line, and a caret.
public struct DiagnosticRenderer: Sendable {
    let files: [SourceFile]

    /// Creates a renderer for diagnostics located in `files`.
    public init(files: [SourceFile]) { self.files = files }

    /// Renders one diagnostic, ending with a newline.
    public func render(_ diagnostic: Diagnostic) -> String {
        let head = Self.head(of: diagnostic)
        guard let location = diagnostic.location, files.indices.contains(location.file) else {
            return "switchboard: \(head)\n"
        }
        let file = files[location.file]
        let (line, column) = file.lineAndColumn(of: location.offset)
        return render(head, in: file, line: line, column: column, offset: location.offset)
    }

    /// The diagnostic's text given where it is. Only a window of the line around the caret is
    /// decoded: a one-line schema with many errors must cost neither the whole line's
    /// decoding nor its printing for each.
    func render(_ head: String, in file: SourceFile, line: Int, column: Int, offset: Int) -> String {
        let range = file.lineRange(line)
        let caretOffset = max(range.lowerBound, min(offset, range.upperBound))
        let half = Self.shownLineWidth / 2
        var start = file.offset(caretOffset, movedBy: -half, within: range)
        var end = file.offset(caretOffset, movedBy: half, within: range)
        // Near either end of the line, the window extends the other way.
        let shownBefore = SourceFile.scalarCount(file.utf8, from: start, to: caretOffset)
        if shownBefore < half { end = file.offset(end, movedBy: half - shownBefore, within: range) }
        let shownAfter = SourceFile.scalarCount(file.utf8, from: caretOffset, to: end)
        if shownAfter < half { start = file.offset(start, movedBy: -(half - shownAfter), within: range) }
        let before = Array(String(decoding: file.utf8[start..<caretOffset], as: UTF8.self).unicodeScalars)
        var text = String(decoding: file.utf8[start..<end], as: UTF8.self)
        var padding = String(String.UnicodeScalarView(before.map { $0 == "\t" ? "\t" : " " }))
        if start > range.lowerBound {
            text = "…" + text
            padding = " " + padding
        }
        if end < range.upperBound { text += "…" }
        // Keep tabs so the caret lines up however the terminal renders them.
        return "\(file.path):\(line):\(column): \(head)\n\(text)\n\(padding)^\n"
    }

    /// `severity: message [code]` on one line: a message quoting schema text (a decoded
    /// string with a newline, say) shows control characters escaped, as Swift writes them.
    static func head(of diagnostic: Diagnostic) -> String {
        var message = ""
        for scalar in diagnostic.message.unicodeScalars {
            switch scalar {
            case "\n": message += "\\n"
            case "\r": message += "\\r"
            case "\t": message += "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value):
                message += "\\u{\(String(scalar.value, radix: 16))}"
            default: message.unicodeScalars.append(scalar)
            }
        }
        return "\(diagnostic.severity.rawValue): \(message) [\(diagnostic.code.rawValue)]"
    }

    /// The most of a source line shown with a diagnostic, in characters (the rest is elided).
    static let shownLineWidth = 160

    /// Renders many diagnostics. Columns are counted on from the previous diagnostic when it
    /// was earlier on the same line, so many on one long line cost one scan of it.
    public func render(_ diagnostics: [Diagnostic]) -> String {
        var output = ""
        var last: (file: Int, line: Int, offset: Int, column: Int)?
        for diagnostic in diagnostics {
            guard let location = diagnostic.location, files.indices.contains(location.file) else {
                output += render(diagnostic)
                continue
            }
            let file = files[location.file]
            let line = file.lineIndex(of: location.offset) + 1
            let column: Int
            if let last, last.file == location.file, last.line == line, last.offset <= location.offset {
                column = last.column + SourceFile.scalarCount(file.utf8, from: last.offset, to: min(location.offset, file.utf8.count))
            } else {
                column = file.lineAndColumn(of: location.offset).column
            }
            last = (location.file, line, min(location.offset, file.utf8.count), column)
            output += render(Self.head(of: diagnostic), in: file, line: line, column: column, offset: location.offset)
        }
        return output
    }
}
