/// A lexical token of the schema language.
public struct Token: Sendable, Hashable {
    /// What kind of token this is.
    public enum Kind: Sendable, Hashable {
        case identifier
        case integer
        case string
        case leftBrace, rightBrace, leftBracket, rightBracket, leftParen, rightParen
        case colon, comma, equals, question, dot, at, minus, arrow, slash, star, bang
        case endOfFile
    }

    /// The kind.
    public let kind: Kind
    /// The source text (for strings, the decoded value; for integers, the digits).
    public let text: String
    /// The value of an integer literal; `nil` if it overflowed.
    public let integerValue: UInt64?
    /// Where the token starts.
    public let location: SourceLocation
    /// `///` lines directly before the token, without the slashes.
    public let documentation: [String]
    /// Where the first of those `///` lines starts.
    public let documentationLocation: SourceLocation?

    /// Whether this is the identifier `word`, which is how contextual keywords are matched.
    public func isKeyword(_ word: String) -> Bool { kind == .identifier && text == word }
}

extension Token.Kind {
    /// How the kind reads in "expected ..." messages.
    var spelling: String {
        switch self {
        case .identifier: return "an identifier"
        case .integer: return "an integer"
        case .string: return "a string"
        case .leftBrace: return "'{'"
        case .rightBrace: return "'}'"
        case .leftBracket: return "'['"
        case .rightBracket: return "']'"
        case .leftParen: return "'('"
        case .rightParen: return "')'"
        case .colon: return "':'"
        case .comma: return "','"
        case .equals: return "'='"
        case .question: return "'?'"
        case .dot: return "'.'"
        case .at: return "'@'"
        case .minus: return "'-'"
        case .arrow: return "'->'"
        case .slash: return "'/'"
        case .star: return "'*'"
        case .bang: return "'!'"
        case .endOfFile: return "end of file"
        }
    }
}
