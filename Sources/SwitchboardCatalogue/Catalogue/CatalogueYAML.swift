import Foundation

/// Reads the YAML the catalogue uses: block mappings and sequences by indentation, flow
/// lists (`[a, "b"]`), plain, single- and double-quoted scalars, and comments. That is the
/// subset SimpleX's catalogue design names ("YAML that is simply a syntactically different
/// JSON"); anchors, tags, multi-line scalars and flow mappings are refused with an error
/// naming the line. Cost is linear in the text; nesting and size are bounded.
public enum CatalogueYAML {
    /// How much a file may hold, each with a safe default.
    public struct Limits: Sendable, Hashable {
        /// The largest file read: 1 MiB.
        public var maximumBytes = 1 << 20
        /// The deepest nesting read: 32 levels.
        public var maximumDepth = 32
        /// The most bytes one catalogue reads across all its files: 16 MiB. Each service's
        /// definition is a file of its own, so the per-file limit alone would let one
        /// `services.yml` of many entries make a reader take in far more.
        public var maximumTotalBytes = 16 << 20

        /// The defaults.
        public init() {}
    }

    struct Line {
        let number: Int
        var indent: Int
        var text: Substring
    }

    /// Parses `text` (the contents of `file`, named in errors).
    public static func parse(_ text: String, file: String, limits: Limits = Limits()) throws(CatalogueError) -> CatalogueValue {
        guard text.utf8.count <= limits.maximumBytes else { throw CatalogueError(file: file, "larger than \(limits.maximumBytes) bytes") }
        var lines: [Line] = []
        // "\r\n" is one Character: split on both, so files with Windows line ends read alike.
        for (offset, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            var content = raw.hasSuffix("\r") ? raw.dropLast() : raw
            content = try stripComment(content, file: file, line: offset + 1)
            let indent = content.prefix { $0 == " " }.count
            let body = content.dropFirst(indent)
            // A line of blanks is empty, tabs and all.
            if body.allSatisfy(isBlank) { continue }
            if body.first == "\t" { throw CatalogueError(file: file, line: offset + 1, "indentation must be spaces") }
            var trimmed = body
            // A trailing tab is a blank like a space: `rpc: p.S/M<tab>` names `p.S/M`.
            while let last = trimmed.last, isBlank(last) { trimmed = trimmed.dropLast() }
            if trimmed == "---" || trimmed == "..." { continue }
            lines.append(Line(number: offset + 1, indent: indent, text: trimmed))
        }
        guard !lines.isEmpty else { return .mapping([]) }
        var reader = Reader(lines: lines, file: file, maximumDepth: limits.maximumDepth)
        let value = try reader.block(indent: lines[0].indent, depth: 0)
        if reader.position < reader.lines.count {
            throw CatalogueError(file: file, line: reader.lines[reader.position].number, "unexpected indentation")
        }
        return value
    }

    /// A space or a tab: what separates a comment, a value, a flow item, and what trails a line.
    static func isBlank(_ character: Character) -> Bool { character == " " || character == "\t" }

    /// Whether the character at `index` of `text` closes the quoted scalar `open` opened;
    /// `escaped` carries over from one character to the next. In double quotes a backslash
    /// escapes what follows (`"a\" # b"` is one string); in single quotes `''` is one quote
    /// (`'Bob''s # 1'` is one string), so its first quote does not close it.
    static func closesQuote(_ open: Character, at index: Substring.Index, in text: Substring, escaped: inout Bool) -> Bool {
        let character = text[index]
        if escaped {
            escaped = false
            return false
        }
        if open == "\"", character == "\\" {
            escaped = true
            return false
        }
        guard character == open else { return false }
        let next = text.index(after: index)
        if open == "'", next < text.endIndex, text[next] == "'" {
            escaped = true
            return false
        }
        return true
    }

    /// The line without its `#` comment (a `#` inside quotes, or not after a blank, is text).
    static func stripComment(_ line: Substring, file: String, line number: Int) throws(CatalogueError) -> Substring {
        var quote: Character?
        var previous: Character = " "
        var escaped = false
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if closesQuote(open, at: index, in: line, escaped: &escaped) { quote = nil }
            } else if (character == "\"" || character == "'") && (isBlank(previous) || "[,:-".contains(previous)) {
                // A quote opens a scalar only where one starts: `Bob's # note` has a comment.
                quote = character
            } else if character == "#", isBlank(previous) {
                return line[..<index]
            }
            previous = character
        }
        return line
    }

    struct Reader {
        var lines: [Line]
        let file: String
        let maximumDepth: Int
        var position = 0

        func error(_ message: String, at line: Line? = nil) -> CatalogueError {
            CatalogueError(file: file, line: (line ?? (position < lines.count ? lines[position] : lines.last))?.number, message)
        }

        /// The block starting at the current line, whose lines are indented by `indent`.
        mutating func block(indent: Int, depth: Int) throws(CatalogueError) -> CatalogueValue {
            guard depth < maximumDepth else { throw error("nested deeper than \(maximumDepth) levels") }
            let first = lines[position]
            return first.text == "-" || first.text.hasPrefix("- ")
                ? try sequence(indent: indent, depth: depth)
                : try mapping(indent: indent, depth: depth)
        }

        mutating func sequence(indent: Int, depth: Int) throws(CatalogueError) -> CatalogueValue {
            var items: [CatalogueValue] = []
            while position < lines.count, lines[position].indent == indent,
                  lines[position].text == "-" || lines[position].text.hasPrefix("- ") {
                let line = lines[position]
                let rest = line.text.dropFirst().drop { $0 == " " }
                if rest.isEmpty {
                    position += 1
                    guard position < lines.count, lines[position].indent > indent else { items.append(.scalar("")); continue }
                    items.append(try block(indent: lines[position].indent, depth: depth + 1))
                } else if CatalogueYAML.keyAndValue(rest) != nil || rest.hasPrefix("- ") {
                    // `- key: value` starts a mapping (or a list) indented as far as `key`.
                    let nested = indent + (line.text.count - rest.count)
                    lines[position] = Line(number: line.number, indent: nested, text: rest)
                    items.append(try block(indent: nested, depth: depth + 1))
                } else {
                    items.append(try CatalogueYAML.scalarOrFlow(rest, reader: self, line: line))
                    position += 1
                }
            }
            return .list(items)
        }

        mutating func mapping(indent: Int, depth: Int) throws(CatalogueError) -> CatalogueValue {
            var entries: [CatalogueEntry] = []
            var keys: Set<String> = []
            while position < lines.count, lines[position].indent == indent {
                let line = lines[position]
                guard !(line.text == "-" || line.text.hasPrefix("- ")) else { throw error("a list item where a key was expected", at: line) }
                guard let (rawKey, rawValue) = CatalogueYAML.keyAndValue(line.text) else {
                    throw error("expected 'key: value'", at: line)
                }
                let key = try CatalogueYAML.scalarText(rawKey, reader: self, line: line)
                guard keys.insert(key).inserted else { throw error("key '\(key)' appears twice", at: line) }
                position += 1
                let value: CatalogueValue
                if !rawValue.isEmpty {
                    value = try CatalogueYAML.scalarOrFlow(rawValue, reader: self, line: line)
                } else if position < lines.count, lines[position].indent > indent {
                    value = try block(indent: lines[position].indent, depth: depth + 1)
                } else if position < lines.count, lines[position].indent == indent,
                          lines[position].text == "-" || lines[position].text.hasPrefix("- ") {
                    // A list may sit at its key's own indentation.
                    value = try sequence(indent: indent, depth: depth + 1)
                } else {
                    value = .scalar("")
                }
                entries.append(CatalogueEntry(key: key, value: value))
            }
            if position < lines.count, lines[position].indent > indent { throw error("unexpected indentation") }
            return .mapping(entries)
        }
    }

    /// Splits `key: value` at the first `:` followed by a blank or the end, outside a quoted
    /// key. A quote opens a quoted scalar only where the scalar starts: in `Bob's: x` the
    /// apostrophe is a letter.
    static func keyAndValue(_ text: Substring) -> (Substring, Substring)? {
        var quote: Character?
        var escaped = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if let open = quote {
                if closesQuote(open, at: index, in: text, escaped: &escaped) { quote = nil }
            } else if index == text.startIndex, character == "\"" || character == "'" {
                quote = character
            } else if character == ":" {
                let after = text.index(after: index)
                if after == text.endIndex || isBlank(text[after]) {
                    var key = text[..<index]
                    while let last = key.last, isBlank(last) { key = key.dropLast() }
                    guard !key.isEmpty, !key.hasPrefix("[") else { return nil }
                    return (key, text[after...].drop(while: isBlank))
                }
            }
            index = text.index(after: index)
        }
        return nil
    }

    static func scalarOrFlow(_ text: Substring, reader: Reader, line: Line) throws(CatalogueError) -> CatalogueValue {
        if text.hasPrefix("[") {
            guard text.hasSuffix("]") else { throw reader.error("a flow list must end on its line with ']'", at: line) }
            let inner = text.dropFirst().dropLast()
            var items: [CatalogueValue] = []
            var quote: Character?
            var start = inner.startIndex
            var index = inner.startIndex
            // Whether the item so far holds more than spaces: kept as it goes, not rescanned
            // at each quote (a line of quotes after spaces was quadratic).
            var itemHasContent = false
            func add(_ piece: Substring) throws(CatalogueError) {
                let trimmed = piece.drop(while: isBlank).reversed().drop(while: isBlank).reversed()
                let item = Substring(String(trimmed))
                if item.isEmpty { return }
                items.append(.scalar(try scalarText(item, reader: reader, line: line)))
            }
            var escaped = false
            while index < inner.endIndex {
                let character = inner[index]
                if let open = quote {
                    if closesQuote(open, at: index, in: inner, escaped: &escaped) { quote = nil }
                } else if character == "\"" || character == "'", !itemHasContent {
                    // Only at an item's start: in `[Bob's, Alice]` the apostrophe is a letter.
                    quote = character
                    itemHasContent = true
                } else if character == "[" || character == "{" {
                    throw reader.error("nested flow collections are not supported", at: line)
                } else if character == "," {
                    try add(inner[start..<index])
                    start = inner.index(after: index)
                    itemHasContent = false
                } else if !isBlank(character) {
                    itemHasContent = true
                }
                index = inner.index(after: index)
            }
            try add(inner[start...])
            return .list(items)
        }
        if text.hasPrefix("{") { throw reader.error("flow mappings are not supported; use block mappings", at: line) }
        return .scalar(try scalarText(text, reader: reader, line: line))
    }

    /// A scalar's text: quotes removed and escapes decoded.
    static func scalarText(_ text: Substring, reader: Reader, line: Line) throws(CatalogueError) -> String {
        if text.hasPrefix("\"") {
            guard text.count >= 2, text.hasSuffix("\"") else { throw reader.error("unterminated string", at: line) }
            var result = ""
            var escaped = false
            for character in text.dropFirst().dropLast() {
                if escaped {
                    switch character {
                    case "n": result.append("\n")
                    case "t": result.append("\t")
                    case "\"", "\\", "/": result.append(character)
                    default: throw reader.error("unsupported escape '\\\(character)'", at: line)
                    }
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else {
                    result.append(character)
                }
            }
            if escaped { throw reader.error("unterminated string", at: line) }
            return result
        }
        if text.hasPrefix("'") {
            guard text.count >= 2, text.hasSuffix("'") else { throw reader.error("unterminated string", at: line) }
            return text.dropFirst().dropLast().replacingOccurrences(of: "''", with: "'")
        }
        if let first = text.first, "&*|>%@`".contains(first) {
            throw reader.error("'\(first)' (anchors, aliases, block scalars, directives) is not supported", at: line)
        }
        return String(text)
    }
}
