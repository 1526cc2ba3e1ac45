/// A structured model of the Swift the generator writes: declarations with
/// documentation, access and members, and function bodies as nested code blocks.
///
/// Translators build this model from the validated ``Schema``; ``SwiftRenderer``
/// turns it into text. Keeping the two apart lets each be tested on its own.
public struct SwiftFile: Sendable, Hashable {
    /// Path relative to the output directory.
    public var path: String
    /// Comment lines at the top of the file, without `//`.
    public var header: [String]
    public var imports: [String]
    public var declarations: [SwiftDeclaration]
    /// The index of the schema file the declarations come from.
    public var sourceFile: Int = 0
}

/// A declaration.
public indirect enum SwiftDeclaration: Sendable, Hashable {
    case type(SwiftTypeDeclaration)
    case property(SwiftProperty)
    case function(SwiftFunction)
    case enumCase(SwiftEnumCase)
    /// `typealias name = target`.
    case typeAlias(SwiftTypeAlias)
}

/// A type alias.
public struct SwiftTypeAlias: Sendable, Hashable {
    public var documentation: [String]
    public var access: String
    public var name: String
    public var target: String

    public init(documentation: [String] = [], access: String, name: String, target: String) {
        self.documentation = documentation
        self.access = access
        self.name = name
        self.target = target
    }
}

/// A `struct`, `enum` or `extension`.
public struct SwiftTypeDeclaration: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case `struct`, `enum`, `extension`, `protocol`
        case `class` = "final class"
    }
    public var kind: Kind
    public var documentation: [String] = []
    public var access: String?
    public var name: String
    public var conformances: [String] = []
    public var members: [SwiftDeclaration] = []
}

/// A stored or computed property.
public struct SwiftProperty: Sendable, Hashable {
    public var documentation: [String] = []
    public var access: String?
    public var isStatic = false
    public var isLet = false
    public var name: String
    public var type: String?
    public var initializer: String?
    /// Getter body for a computed property.
    public var getter: [CodeLine]?
    /// Setter body (with `newValue`) for a computed property.
    public var setter: [CodeLine]?
}

/// A function or initializer; `signature` is everything before the body's brace.
public struct SwiftFunction: Sendable, Hashable {
    public var documentation: [String] = []
    public var access: String?
    public var signature: String
    /// Parameters written one per line after `signature`, for long parameter lists.
    public var parameters: [String]? = nil
    /// What follows the parameter list, such as ` async throws -> T`.
    public var signatureSuffix: String = ""
    public var body: [CodeLine]
}

/// An enum case.
public struct SwiftEnumCase: Sendable, Hashable {
    public var documentation: [String] = []
    public var isIndirect = false
    public var name: String
    /// The associated value's type, if any.
    public var associatedType: String?
}

/// A line of a body, or a braced block whose contents are indented.
public indirect enum CodeLine: Sendable, Hashable {
    case line(String)
    case block(String, [CodeLine], closing: String = "}")
    /// A line followed by an indented body and no braces, such as a `case` of a `switch`.
    case nested(String, [CodeLine])
    /// An opening line written as is, an indented body, and a closing line.
    case enclosed(String, [CodeLine], String)
    /// `do <header> { body } catch { handler }`
    case doCatch(String, [CodeLine], [CodeLine])
}
