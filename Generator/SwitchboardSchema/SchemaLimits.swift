/// How much schema text the compiler reads and how deep it may go. Past a limit the input is
/// refused with a diagnostic (a file too large is not read at all); the defaults are far
/// beyond any real API and keep a hostile schema's cost bounded. Each is held to its range
/// when the limits are made.
public struct SchemaLimits: Sendable, Hashable {
    /// The largest schema file read, in bytes. Default 16 MiB (``SchemaCompiler/maximumFileSize``).
    public private(set) var maximumFileSize: Int
    /// The longest name, in characters. Default 128 (``Lexer/maximumIdentifierLength``).
    public private(set) var maximumIdentifierLength: Int
    /// The deepest nesting of messages, and of type constructors. Default 32
    /// (``Parser/maximumNesting``); at most 256, since the parser recurses per level.
    public private(set) var maximumNesting: Int
    /// The most dotted parts of a package or type name. Default 32 (``Parser/maximumNameComponents``).
    public private(set) var maximumNameComponents: Int
    /// The most reserved keys, ranges and names one declaration may list. Default 1,000.
    public private(set) var maximumReservedEntries: Int
    /// The longest string literal (a route, a header name), in UTF-8 bytes of its text.
    /// Default 64 KiB (``Lexer/maximumStringLength``).
    public private(set) var maximumStringLength: Int

    /// Limits with the given values (each at least 1; nesting at most 256).
    public init(maximumFileSize: Int = SchemaCompiler.maximumFileSize, maximumIdentifierLength: Int = Lexer.maximumIdentifierLength,
                maximumNesting: Int = Parser.maximumNesting, maximumNameComponents: Int = Parser.maximumNameComponents,
                maximumReservedEntries: Int = 1000, maximumStringLength: Int = Lexer.maximumStringLength) {
        self.maximumFileSize = max(1, maximumFileSize)
        self.maximumIdentifierLength = max(1, maximumIdentifierLength)
        self.maximumNesting = min(max(1, maximumNesting), 256)
        self.maximumNameComponents = max(1, maximumNameComponents)
        self.maximumReservedEntries = max(1, maximumReservedEntries)
        self.maximumStringLength = max(1, maximumStringLength)
    }
}
