/// A recursive-descent parser for the schema language with error recovery.
///
/// After an error it skips to the next token that can start a declaration or
/// member at the same brace depth, so one run reports many independent errors.
/// Nesting is capped, and every loop consumes a token, so no input can hang it.
public struct Parser {
    /// The default deepest nesting of messages, and of type constructors (``SchemaLimits/maximumNesting``).
    public static let maximumNesting = 32
    /// The default most dotted parts of a package or type name (``SchemaLimits/maximumNameComponents``):
    /// every declaration carries its package's full name, so a name of thousands of parts
    /// would cost that much per type.
    public static let maximumNameComponents = 32

    let tokens: [Token]
    /// The file the tokens come from, for the indentation of braces; `nil` in token-only tests.
    let file: SourceFile?
    var index = 0
    var diagnostics = DiagnosticCollector()
    var messageDepth = 0
    /// The innermost block closed by a `}` indented left of the line that opened it: when an
    /// enclosing block then runs to the end of the file, that `}` most likely belonged to the
    /// enclosing block, and this is the block whose `}` is missing.
    var misindentedClose: (open: Token, what: String, close: Token)?
    /// Set once a block left open at the end of the file is reported: enclosing blocks are
    /// open for the same reason, so reporting them too would only repeat it.
    var reportedUnclosed = false

    /// The nesting and name limits this parser holds the file to.
    let limits: SchemaLimits

    init(tokens: [Token], file: SourceFile? = nil, limits: SchemaLimits = SchemaLimits()) {
        self.tokens = tokens
        self.file = file
        self.limits = limits
    }

    /// Lexes and parses one file.
    public static func parse(_ file: SourceFile, fileIndex: Int, limits: SchemaLimits = SchemaLimits()) -> (syntax: FileSyntax, diagnostics: [Diagnostic]) {
        let (tokens, lexDiagnostics) = Lexer.tokenize(file, fileIndex: fileIndex, limits: limits)
        var parser = Parser(tokens: tokens, file: file, limits: limits)
        let syntax = parser.parseFile()
        return (syntax, lexDiagnostics + parser.diagnostics.diagnostics)
    }

    // MARK: Token helpers

    // Mutating, as are the other helpers the parse loops call: a debug build copies the
    // whole parser (tokens, file, diagnostics) for each non-mutating call from a mutating one.
    var current: Token { mutating get { tokens[index] } }

    mutating func peek(_ ahead: Int = 1) -> Token { tokens[min(index + ahead, tokens.count - 1)] }

    @discardableResult
    mutating func advance() -> Token {
        let token = tokens[index]
        if token.kind == .rightBrace, !token.documentation.isEmpty {
            diagnostics.warning(.danglingDocComment, "documentation comment is not attached to a declaration", at: token.documentationLocation ?? token.location)
        }
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    var atEnd: Bool { mutating get { current.kind == .endOfFile } }

    mutating func consume(_ kind: Token.Kind) -> Token? {
        guard current.kind == kind else { return nil }
        return advance()
    }

    func describe(_ token: Token) -> String {
        switch token.kind {
        case .identifier: return "'\(token.text)'"
        case .integer: return "integer \(token.text)"
        case .string: return "string \"\(token.text)\""
        default: return token.kind.spelling
        }
    }

    mutating func expect(_ kind: Token.Kind, _ context: String) -> Token? {
        if let token = consume(kind) { return token }
        diagnostics.error(.expectedToken, "expected \(kind.spelling) \(context), found \(describe(current))", at: current.location)
        return nil
    }

    /// The `}` that closes `what`, opened at `open`. One that is still missing at the end
    /// of the file is reported once, where the block opened: that is where to look, and the
    /// end of the file is not. When an inner block took a `}` indented like an enclosing
    /// block's, the inner block is the one reported.
    mutating func expectClose(opened open: Token, _ what: String, runsOnAt endsBlock: (Token) -> Bool = { _ in false }) {
        if let close = consume(.rightBrace) {
            if misindentedClose == nil, let file, isMisindented(close, closing: open, in: file) {
                misindentedClose = (open, what, close)
            }
            return
        }
        // A declaration that can only stand at the top level also shows that the block ran on.
        let runsOn = atEnd || (Self.startsTopLevelDeclaration(current) && current.kind != .at) || endsBlock(current)
        guard runsOn else {
            diagnostics.error(.expectedToken, "expected '}' to close \(what), found \(describe(current))", at: current.location)
            return
        }
        if atEnd {
            guard !reportedUnclosed else { return }
            reportedUnclosed = true
        }
        let until = atEnd ? "the end of the file" : describe(current)
        defer { misindentedClose = nil }
        if let (innerOpen, innerWhat, close) = misindentedClose, let file {
            let line = file.lineAndColumn(of: close.location.offset).line
            diagnostics.error(.expectedToken, "\(innerWhat) is never closed: the '}' on line \(line) is indented like an enclosing block's, which then runs on to \(until)", at: innerOpen.location)
        } else {
            diagnostics.error(.expectedToken, "\(what) is never closed: expected '}' before \(until)", at: open.location)
        }
    }

    /// Whether `close` starts its line left of where the line holding `open` starts. Looks
    /// only at the blanks before each (a `}` after other text on its line has no indentation
    /// to compare), so a schema written on one long line costs no more per `}`.
    func isMisindented(_ close: Token, closing open: Token, in file: SourceFile) -> Bool {
        var index = close.location.offset
        var closeIndentation = 0
        while index > 0, file.utf8[index - 1] != UInt8(ascii: "\n") {
            guard file.utf8[index - 1] == UInt8(ascii: " ") || file.utf8[index - 1] == UInt8(ascii: "\t") else { return false }
            closeIndentation += 1
            index -= 1
        }
        return closeIndentation < file.indentation(ofLineAt: open.location.offset)
    }

    mutating func expectName(_ context: String) -> NameSyntax? {
        guard current.kind == .identifier else {
            diagnostics.error(.expectedToken, "expected \(context), found \(describe(current))", at: current.location)
            return nil
        }
        let token = advance()
        return NameSyntax(text: token.text, location: token.location)
    }

    /// Skips tokens until `stop` holds at brace depth 0, stepping over balanced braces.
    mutating func recover(until stop: (Token) -> Bool) {
        var depth = 0
        while !atEnd {
            if depth == 0, stop(current) { return }
            switch current.kind {
            case .leftBrace: depth += 1
            case .rightBrace:
                if depth == 0 { return }
                depth -= 1
            default: break
            }
            advance()
        }
    }

    // MARK: File

    mutating func parseFile() -> FileSyntax {
        var file = FileSyntax()
        while !atEnd {
            if current.isKeyword("package") {
                let start = advance()
                if let package = parseDottedName("a package name") {
                    file.packages.append(PackageSyntax(components: package, location: start.location))
                } else {
                    recover(until: Self.startsTopLevelDeclaration)
                }
                continue
            }
            if current.isKeyword("import") {
                let start = advance()
                if let package = parseDottedName("a package name to import") {
                    file.imports.append(PackageSyntax(components: package, location: start.location))
                } else {
                    recover(until: Self.startsTopLevelDeclaration)
                }
                continue
            }
            let before = index
            if let declaration = parseDeclaration(topLevel: true) {
                file.declarations.append(declaration)
            }
            if index == before {
                // Nothing was consumed: a stray '}' or similar. Skip it to guarantee progress.
                advance()
                recover(until: Self.startsTopLevelDeclaration)
            }
        }
        return file
    }

    static func startsTopLevelDeclaration(_ token: Token) -> Bool {
        token.isKeyword("message") || token.isKeyword("enum") || token.isKeyword("package") || token.isKeyword("import") || token.kind == .at
            || token.isKeyword("service") || token.isKeyword("errors") || token.isKeyword("key")
    }

    mutating func parseDottedName(_ what: String) -> [NameSyntax]? {
        guard let first = expectName(what) else { return nil }
        var components = [first]
        var partCount = 1
        // Read to its end whatever its length (one diagnostic, not one per part), kept only
        // up to the limit.
        while current.kind == .dot {
            advance()
            guard let next = expectName("an identifier after '.'") else { return nil }
            partCount += 1
            if partCount <= limits.maximumNameComponents { components.append(next) }
        }
        guard partCount <= limits.maximumNameComponents else {
            diagnostics.error(.identifierTooLong, "\(what) of \(partCount) dotted parts; at most \(limits.maximumNameComponents) are allowed", at: first.location)
            return nil
        }
        return components
    }

    // MARK: Attributes

    mutating func parseAttributes() -> [AttributeSyntax] {
        var attributes: [AttributeSyntax] = []
        while current.kind == .at {
            advance()
            guard let name = expectName("an attribute name after '@'") else { break }
            var arguments: [Token] = []
            if current.kind == .leftParen {
                advance()
                while !atEnd, current.kind != .rightParen, current.kind != .rightBrace {
                    arguments.append(advance())
                }
                _ = expect(.rightParen, "to close the attribute's arguments")
            }
            attributes.append(AttributeSyntax(name: name, arguments: arguments))
        }
        return attributes
    }

    // MARK: Declarations

    /// Parses `message` or `enum`, with leading attributes. Reports and returns nil otherwise.
    mutating func parseDeclaration(topLevel: Bool) -> DeclarationSyntax? {
        let documentation = current.documentation
        return parseDeclaration(topLevel: topLevel, documentation: documentation, attributes: parseAttributes())
    }

    /// The same, once its documentation and attributes are read.
    mutating func parseDeclaration(topLevel: Bool, documentation: [String], attributes: [AttributeSyntax]) -> DeclarationSyntax? {
        if current.isKeyword("message") {
            return parseMessage(documentation: documentation, attributes: attributes).map(DeclarationSyntax.message)
        }
        if current.isKeyword("enum") {
            return parseEnum(documentation: documentation, attributes: attributes).map(DeclarationSyntax.enumeration)
        }
        if topLevel, current.isKeyword("service") {
            return parseService(documentation: documentation, attributes: attributes).map(DeclarationSyntax.service)
        }
        if topLevel, current.isKeyword("errors") {
            return parseErrorSet(documentation: documentation).map(DeclarationSyntax.errorSet)
        }
        if topLevel, current.isKeyword("key") {
            return parseKey(documentation: documentation).map(DeclarationSyntax.key)
        }
        if topLevel {
            var message = "expected a declaration ('message', 'enum', 'service', 'errors' or 'key'), found \(describe(current))"
            if current.kind == .identifier, let suggestion = Self.suggest(current.text, among: ["message", "enum", "package", "import", "service", "errors"]) {
                message += "; did you mean '\(suggestion)'?"
            }
            diagnostics.error(.unknownDeclaration, message, at: current.location)
            if current.kind != .rightBrace { advance() }
            recover(until: Self.startsTopLevelDeclaration)
        }
        return nil
    }

    mutating func parseMessage(documentation: [String], attributes: [AttributeSyntax]) -> MessageSyntax? {
        advance() // 'message'
        guard let name = expectName("a message name") else {
            recover(until: Self.startsTopLevelDeclaration)
            if current.kind == .leftBrace { skipBlock() }
            return nil
        }
        guard let open = expect(.leftBrace, "to open the body of message '\(name.text)'") else {
            recover(until: { $0.kind == .leftBrace || Self.startsTopLevelDeclaration($0) })
            if current.kind == .leftBrace { skipBlock() }
            return nil
        }
        if messageDepth >= limits.maximumNesting {
            diagnostics.error(.nestingTooDeep, "messages are nested more than \(limits.maximumNesting) deep", at: name.location)
            skipRestOfBlock()
            return nil
        }
        messageDepth += 1
        defer { messageDepth -= 1 }
        var members: [MessageMemberSyntax] = []
        while !atEnd, current.kind != .rightBrace {
            let before = index
            if let member = parseMessageMember() { members.append(member) }
            if index == before { advance() }
        }
        expectClose(opened: open, "message '\(name.text)'")
        return MessageSyntax(name: name, documentation: documentation, attributes: attributes, members: members)
    }

    static func startsMember(_ token: Token) -> Bool {
        token.kind == .integer || token.kind == .minus || token.kind == .at || token.kind == .rightBrace
            || token.isKeyword("oneof") || token.isKeyword("reserved")
            || token.isKeyword("message") || token.isKeyword("enum")
    }

    mutating func parseMessageMember() -> MessageMemberSyntax? {
        let documentation = current.documentation
        if current.kind == .at || current.isKeyword("message") || current.isKeyword("enum") {
            let save = index
            let attributes = parseAttributes()
            if current.kind == .integer {
                return parseField(documentation: documentation, attributes: attributes).map(MessageMemberSyntax.field)
            }
            // The attributes are read once: a second reading reported their errors twice.
            if let declaration = parseDeclaration(topLevel: false, documentation: documentation, attributes: attributes) { return .declaration(declaration) }
            // A declaration that failed to parse has reported its own error.
            if current.isKeyword("message") || current.isKeyword("enum") || index > save && tokens[index - 1].kind == .rightBrace { return nil }
            diagnostics.error(.expectedToken, "expected a field, 'message' or 'enum' after attributes, found \(describe(current))", at: current.location)
            recover(until: Self.startsMember)
            return nil
        }
        if current.kind == .integer || (current.kind == .minus && peek().kind == .integer) {
            return parseField(documentation: documentation, attributes: []).map(MessageMemberSyntax.field)
        }
        if current.isKeyword("oneof") {
            return parseOneof(documentation: documentation).map(MessageMemberSyntax.oneof)
        }
        if current.isKeyword("reserved") {
            return parseReserved().map(MessageMemberSyntax.reserved)
        }
        var message = "expected a field ('1 name: Type'), 'oneof', 'reserved', 'message' or 'enum', found \(describe(current))"
        if current.kind == .identifier, peek().kind == .colon {
            message = "field '\(current.text)' needs a key: write '<number> \(current.text): Type'"
        } else if current.kind == .identifier, let suggestion = Self.suggest(current.text, among: ["oneof", "reserved", "message", "enum"]) {
            message += "; did you mean '\(suggestion)'?"
        }
        diagnostics.error(.expectedToken, message, at: current.location)
        advance()
        recover(until: Self.startsMember)
        return nil
    }

    mutating func parseKey() -> IntegerSyntax {
        var negative = false
        let location = current.location
        if current.kind == .minus {
            negative = true
            advance()
        }
        guard let token = consume(.integer) else {
            diagnostics.error(.expectedToken, "expected an integer, found \(describe(current))", at: current.location)
            return IntegerSyntax(value: nil, location: location)
        }
        guard let magnitude = token.integerValue else { return IntegerSyntax(value: nil, location: location) }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else {
                diagnostics.error(.integerTooLarge, "integer literal '-\(token.text)' is too large", at: location)
                return IntegerSyntax(value: nil, location: location)
            }
            return IntegerSyntax(value: magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude), location: location)
        }
        guard magnitude <= UInt64(Int64.max) else {
            diagnostics.error(.integerTooLarge, "integer literal '\(token.text)' is too large", at: location)
            return IntegerSyntax(value: nil, location: location)
        }
        return IntegerSyntax(value: Int64(magnitude), location: location)
    }

    mutating func parseField(documentation: [String], attributes: [AttributeSyntax]) -> FieldSyntax? {
        let key = parseKey()
        guard let name = expectName("a field name after key \(key.value.map(String.init) ?? "")") else {
            recover(until: Self.startsMember)
            return nil
        }
        guard expect(.colon, "after field name '\(name.text)'") != nil, let type = parseType(depth: 0) else {
            recover(until: Self.startsMember)
            return nil
        }
        return FieldSyntax(key: key, name: name, type: type, documentation: documentation, attributes: attributes)
    }

    mutating func parseType(depth: Int) -> TypeSyntax? {
        let location = current.location
        guard depth < limits.maximumNesting else {
            diagnostics.error(.nestingTooDeep, "type is nested more than \(limits.maximumNesting) deep", at: location)
            return nil
        }
        var base: TypeSyntax
        switch current.kind {
        case .leftBracket:
            advance()
            guard let element = parseType(depth: depth + 1), expect(.rightBracket, "to close the list type") != nil else {
                return nil
            }
            base = .list(element, location: location)
        case .leftBrace:
            advance()
            guard let key = parseType(depth: depth + 1), expect(.colon, "between map key and value types") != nil,
                  let value = parseType(depth: depth + 1), expect(.rightBrace, "to close the map type") != nil
            else { return nil }
            base = .map(key: key, value: value, location: location)
        case .identifier:
            guard let components = parseDottedName("a type name") else { return nil }
            var argument: NameSyntax?
            if current.kind == .leftParen {
                advance()
                argument = expectName("an argument in parentheses")
                guard argument != nil, expect(.rightParen, "to close the type argument") != nil else { return nil }
            }
            base = .named(components: components, argument: argument, location: location)
        default:
            diagnostics.error(.expectedToken, "expected a type, found \(describe(current))", at: current.location)
            return nil
        }
        if current.kind == .question {
            advance()
            base = .optional(base, location: location)
        }
        return base
    }

    mutating func parseOneof(documentation: [String]) -> OneofSyntax? {
        advance() // 'oneof'
        guard let name = expectName("a oneof name"), let open = expect(.leftBrace, "to open the oneof") else {
            recover(until: Self.startsMember)
            if current.kind == .leftBrace { skipBlock() }
            return nil
        }
        var fields: [FieldSyntax] = []
        while !atEnd, current.kind != .rightBrace {
            let before = index
            let fieldDocumentation = current.documentation
            let attributes = parseAttributes()
            if current.kind == .integer {
                if let field = parseField(documentation: fieldDocumentation, attributes: attributes) { fields.append(field) }
            } else {
                diagnostics.error(.expectedToken, "expected a field ('1 name: Type') in oneof '\(name.text)', found \(describe(current))", at: current.location)
                advance()
                recover(until: { $0.kind == .integer || $0.kind == .rightBrace })
            }
            if index == before { advance() }
        }
        expectClose(opened: open, "oneof '\(name.text)'")
        return OneofSyntax(name: name, documentation: documentation, fields: fields)
    }

    mutating func parseReserved() -> ReservedSyntax? {
        let start = advance() // 'reserved'
        var items: [ReservedSyntax.Item] = []
        repeat {
            if current.kind == .comma, !items.isEmpty { advance() }
            switch current.kind {
            case .integer:
                let low = parseKey()
                if current.isKeyword("to") {
                    advance()
                    if current.isKeyword("max") {
                        advance()
                        items.append(.keysToMax(low))
                    } else {
                        items.append(.keys(low, parseKey()))
                    }
                } else {
                    items.append(.keys(low, nil))
                }
            case .identifier:
                let token = advance()
                items.append(.name(NameSyntax(text: token.text, location: token.location)))
            case .string:
                let token = advance()
                items.append(.name(NameSyntax(text: token.text, location: token.location)))
            default:
                diagnostics.error(.expectedToken, "expected a key, key range or name after 'reserved', found \(describe(current))", at: current.location)
                recover(until: Self.startsMember)
                return items.isEmpty ? nil : ReservedSyntax(items: items, location: start.location)
            }
        } while current.kind == .comma
        return ReservedSyntax(items: items, location: start.location)
    }

    mutating func parseEnum(documentation: [String], attributes: [AttributeSyntax]) -> EnumSyntax? {
        advance() // 'enum'
        guard let name = expectName("an enum name"), let open = expect(.leftBrace, "to open the enum body") else {
            recover(until: { $0.kind == .leftBrace || Self.startsTopLevelDeclaration($0) })
            if current.kind == .leftBrace { skipBlock() }
            return nil
        }
        var cases: [EnumCaseSyntax] = []
        var reserved: [ReservedSyntax] = []
        while !atEnd, current.kind != .rightBrace {
            let before = index
            let caseDocumentation = current.documentation
            if current.isKeyword("reserved") {
                if let item = parseReserved() { reserved.append(item) }
                continue
            }
            let caseAttributes = parseAttributes()
            if let caseName = expectName("an enum case name"), expect(.equals, "after enum case '\(caseName.text)'") != nil {
                let value = parseKey()
                cases.append(EnumCaseSyntax(name: caseName, value: value, documentation: caseDocumentation, attributes: caseAttributes))
            } else {
                if index == before { advance() }
                recover(until: { $0.kind == .identifier || $0.kind == .rightBrace || $0.kind == .at })
            }
            if index == before { advance() }
        }
        expectClose(opened: open, "enum '\(name.text)'")
        return EnumSyntax(name: name, documentation: documentation, attributes: attributes, cases: cases, reserved: reserved)
    }

    /// Skips a `{ ... }` block starting at the current `{`.
    mutating func skipBlock() {
        guard current.kind == .leftBrace else { return }
        advance()
        skipRestOfBlock()
    }

    /// Skips to just past the `}` that closes the block we are inside.
    mutating func skipRestOfBlock() {
        var depth = 1
        while !atEnd, depth > 0 {
            if current.kind == .leftBrace { depth += 1 }
            if current.kind == .rightBrace { depth -= 1 }
            advance()
        }
    }

    // MARK: Suggestions

    /// The closest candidate within edit distance 2, for "did you mean" hints.
    static func suggest(_ word: String, among candidates: [String]) -> String? {
        // The distance is at least the difference in length, so most candidates are skipped
        // without the quadratic comparison; a schema full of typos stays fast to diagnose.
        let length = word.count
        let scored = candidates.lazy.filter { abs($0.count - length) <= 2 }
            .map { ($0, editDistance(word, $0)) }.filter { $0.1 > 0 && $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.prefix(64)), b = Array(b.prefix(64))
        var previous = Array(0...b.count)
        for (i, ca) in a.enumerated() {
            var row = [i + 1]
            for (j, cb) in b.enumerated() {
                row.append(min(previous[j + 1] + 1, row[j] + 1, previous[j] + (ca == cb ? 0 : 1)))
            }
            previous = row
        }
        return previous[b.count]
    }
}
