/// Renders structured Swift as text: four-space indentation, one blank line between
/// members, documentation as `///` lines. Output depends only on the input value.
public struct SwiftRenderer: Sendable {
    /// Creates a renderer.
    public init() {}

    /// Renders a whole file, ending with a single newline.
    public func render(_ file: SwiftFile) -> String {
        var lines: [String] = file.header.map { $0.isEmpty ? "//" : "// \(Self.commentText($0))" }
        if !lines.isEmpty { lines.append("") }
        for module in file.imports { lines.append("import \(module)") }
        if !file.imports.isEmpty && !file.declarations.isEmpty { lines.append("") }
        for (index, declaration) in file.declarations.enumerated() {
            if index > 0 { lines.append("") }
            render(declaration, indent: "", into: &lines)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Renders one declaration at the top level; snippet tests use this.
    public func render(_ declaration: SwiftDeclaration) -> String {
        var lines: [String] = []
        render(declaration, indent: "", into: &lines)
        return lines.joined(separator: "\n") + "\n"
    }

    func documentation(_ lines: [String], indent: String, into output: inout [String]) {
        for line in lines { output.append(line.isEmpty ? "\(indent)///" : "\(indent)/// \(Self.commentText(line))") }
    }

    /// `text` made safe to stand in a line comment: whatever Swift would read as the end of
    /// the line (CR, LF, U+2028, U+2029, other controls) becomes a space, so schema text (a
    /// doc comment, a file name) cannot end the comment and put code in the output.
    static func commentText(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F || $0 == "\u{2028}" || $0 == "\u{2029}" || $0 == "\u{85}" }) else {
            return text
        }
        return String(String.UnicodeScalarView(text.unicodeScalars.map {
            ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F || $0 == "\u{2028}" || $0 == "\u{2029}" || $0 == "\u{85}" ? " " : $0
        }))
    }

    func prefix(_ access: String?) -> String { access.map { "\($0) " } ?? "" }

    func render(_ declaration: SwiftDeclaration, indent: String, into output: inout [String], inProtocol: Bool = false) {
        switch declaration {
        case let .type(type):
            documentation(type.documentation, indent: indent, into: &output)
            let conformances = type.conformances.isEmpty ? "" : ": " + type.conformances.joined(separator: ", ")
            output.append("\(indent)\(prefix(type.access))\(type.kind.rawValue) \(type.name)\(conformances) {")
            var previousWasCase = false
            var previousWasProperty = false
            for (index, member) in type.members.enumerated() {
                let isCase: Bool
                if case .enumCase = member { isCase = true } else { isCase = false }
                // Cases sit together, as do undocumented stored properties; other members get a blank line.
                let isPlainProperty: Bool
                if case let .property(property) = member, property.documentation.isEmpty, property.getter == nil {
                    isPlainProperty = true
                } else {
                    isPlainProperty = false
                }
                if index > 0, !(isCase && previousWasCase), !(isPlainProperty && previousWasProperty) { output.append("") }
                previousWasProperty = isPlainProperty
                render(member, indent: indent + "    ", into: &output, inProtocol: type.kind == .protocol)
                previousWasCase = isCase
            }
            output.append("\(indent)}")
        case let .property(property):
            documentation(property.documentation, indent: indent, into: &output)
            var text = indent + prefix(property.access) + (property.isStatic ? "static " : "") + (property.isLet ? "let " : "var ") + property.name
            if let type = property.type { text += ": \(type)" }
            if let initializer = property.initializer { text += " = \(initializer)" }
            if let getter = property.getter {
                if let setter = property.setter {
                    output.append(text + " {")
                    output.append("\(indent)    get {")
                    render(getter, indent: indent + "        ", into: &output)
                    output.append("\(indent)    }")
                    output.append("\(indent)    set {")
                    render(setter, indent: indent + "        ", into: &output)
                    output.append("\(indent)    }")
                    output.append("\(indent)}")
                } else {
                    output.append(text + " {")
                    render(getter, indent: indent + "    ", into: &output)
                    output.append("\(indent)}")
                }
            } else {
                output.append(text)
            }
        case let .function(function):
            documentation(function.documentation, indent: indent, into: &output)
            if inProtocol {
                output.append("\(indent)\(function.signature)\(function.signatureSuffix)")
                break
            }
            if let parameters = function.parameters, !parameters.isEmpty {
                output.append("\(indent)\(prefix(function.access))\(function.signature)(")
                for (position, parameter) in parameters.enumerated() {
                    output.append("\(indent)    \(parameter)" + (position < parameters.count - 1 ? "," : ""))
                }
                output.append("\(indent))\(function.signatureSuffix) {")
            } else if !function.signatureSuffix.isEmpty {
                output.append("\(indent)\(prefix(function.access))\(function.signature)()\(function.signatureSuffix) {")
            } else if function.body.isEmpty {
                output.append("\(indent)\(prefix(function.access))\(function.signature) {}")
                break
            } else {
                output.append("\(indent)\(prefix(function.access))\(function.signature) {")
            }
            render(function.body, indent: indent + "    ", into: &output)
            output.append("\(indent)}")
        case let .enumCase(item):
            documentation(item.documentation, indent: indent, into: &output)
            let associated = item.associatedType.map { "(\($0))" } ?? ""
            output.append("\(indent)\(item.isIndirect ? "indirect " : "")case \(item.name)\(associated)")
        case let .typeAlias(alias):
            documentation(alias.documentation, indent: indent, into: &output)
            output.append("\(indent)\(alias.access) typealias \(alias.name) = \(alias.target)")
        }
    }

    func render(_ lines: [CodeLine], indent: String, into output: inout [String]) {
        for line in lines {
            switch line {
            case let .line(text):
                output.append(text.isEmpty ? "" : indent + text)
            case let .block(header, body, closing):
                output.append("\(indent)\(header) {")
                // Swift style aligns `case` labels with their `switch`.
                render(body, indent: header.hasPrefix("switch ") ? indent : indent + "    ", into: &output)
                output.append("\(indent)\(closing)")
            case let .nested(header, body):
                output.append("\(indent)\(header)")
                render(body, indent: indent + "    ", into: &output)
            case let .enclosed(opening, body, closing):
                // An empty opening continues the line before (a second trailing closure).
                if !opening.isEmpty { output.append("\(indent)\(opening)") }
                render(body, indent: indent + "    ", into: &output)
                output.append("\(indent)\(closing)")
            case let .doCatch(header, body, handler):
                output.append("\(indent)\(header) {")
                render(body, indent: indent + "    ", into: &output)
                output.append("\(indent)} catch {")
                render(handler, indent: indent + "    ", into: &output)
                output.append("\(indent)}")
            }
        }
    }
}
