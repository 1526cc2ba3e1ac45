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
    /// The diagnostics so far, in the order they were found.
    public private(set) var diagnostics: [Diagnostic] = []

    /// Creates an empty collector.
    public init() {}

    /// Whether any error (not warning) was reported.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }

    /// Reports an error.
    public mutating func error(_ code: DiagnosticCode, _ message: String, at location: SourceLocation?) {
        diagnostics.append(Diagnostic(.error, code, message, at: location))
    }

    /// Reports a warning.
    public mutating func warning(_ code: DiagnosticCode, _ message: String, at location: SourceLocation?) {
        diagnostics.append(Diagnostic(.warning, code, message, at: location))
    }

    /// Adds diagnostics found elsewhere.
    public mutating func append(contentsOf other: [Diagnostic]) {
        diagnostics.append(contentsOf: other)
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
        let head = "\(diagnostic.severity.rawValue): \(diagnostic.message) [\(diagnostic.code.rawValue)]"
        guard let location = diagnostic.location, files.indices.contains(location.file) else {
            return "switchboard: \(head)\n"
        }
        let file = files[location.file]
        let (line, column) = file.lineAndColumn(of: location.offset)
        let text = file.lineText(line)
        // Keep tabs so the caret lines up however the terminal renders them.
        let padding = String(text.unicodeScalars.prefix(column - 1).map { $0 == "\t" ? "\t" : " " })
        return "\(file.path):\(line):\(column): \(head)\n\(text)\n\(padding)^\n"
    }

    /// Renders many diagnostics.
    public func render(_ diagnostics: [Diagnostic]) -> String {
        diagnostics.map(render).joined()
    }
}
