/// The syntax tree of one schema file, exactly as written: no name resolution,
/// no checks beyond the grammar. ``SchemaValidator`` turns it into a ``Schema``.
public struct FileSyntax: Sendable, Hashable {
    /// The `package` declarations (more than one is an error, reported later).
    public var packages: [PackageSyntax] = []
    /// `import a.b` declarations: other packages whose types this file uses.
    public var imports: [PackageSyntax] = []
    /// Top-level declarations in source order.
    public var declarations: [DeclarationSyntax] = []
}

/// An identifier and where it was written.
public struct NameSyntax: Sendable, Hashable {
    public var text: String
    public var location: SourceLocation
}

/// `package a.b.c`
public struct PackageSyntax: Sendable, Hashable {
    public var components: [NameSyntax]
    public var location: SourceLocation
    public var name: String { components.map(\.text).joined(separator: ".") }
}

/// `@name` or `@name(argument)` before a declaration.
public struct AttributeSyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var arguments: [Token]
}

/// A declaration that can appear at the top level or inside a message.
public enum DeclarationSyntax: Sendable, Hashable {
    case message(MessageSyntax)
    case enumeration(EnumSyntax)
    case service(ServiceSyntax)
    case errorSet(ErrorSetSyntax)
    case key(KeySyntax)
}

/// `message Name { ... }`
public struct MessageSyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var documentation: [String]
    public var attributes: [AttributeSyntax]
    public var members: [MessageMemberSyntax]
}

/// Something declared inside a message body.
public enum MessageMemberSyntax: Sendable, Hashable {
    case field(FieldSyntax)
    case oneof(OneofSyntax)
    case reserved(ReservedSyntax)
    case declaration(DeclarationSyntax)
}

/// `1 name: Type`
public struct FieldSyntax: Sendable, Hashable {
    public var key: IntegerSyntax
    public var name: NameSyntax
    public var type: TypeSyntax
    public var documentation: [String]
    public var attributes: [AttributeSyntax]
}

/// An integer literal, possibly negated.
public struct IntegerSyntax: Sendable, Hashable {
    /// The value, or `nil` when the literal overflowed (already diagnosed).
    public var value: Int64?
    public var location: SourceLocation
}

/// A field type as written.
public indirect enum TypeSyntax: Sendable, Hashable {
    /// `string`, `Attachment`, `signal.chat.Attachment`, `timestamp(millis)`.
    case named(components: [NameSyntax], argument: NameSyntax?, location: SourceLocation)
    /// `[T]`
    case list(TypeSyntax, location: SourceLocation)
    /// `{K: V}`
    case map(key: TypeSyntax, value: TypeSyntax, location: SourceLocation)
    /// `T?`
    case optional(TypeSyntax, location: SourceLocation)

    public var location: SourceLocation {
        switch self {
        case let .named(_, _, location), let .list(_, location), let .map(_, _, location), let .optional(_, location):
            return location
        }
    }
}

/// `oneof name { fields }`
public struct OneofSyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var documentation: [String]
    public var fields: [FieldSyntax]
}

/// `reserved 4, 9 to 11, oldName, "other"`
public struct ReservedSyntax: Sendable, Hashable {
    /// One reserved key, key range or name.
    public enum Item: Sendable, Hashable {
        case keys(IntegerSyntax, IntegerSyntax?)
        case keysToMax(IntegerSyntax)
        case name(NameSyntax)
    }
    public var items: [Item]
    public var location: SourceLocation
}

/// `enum Name { case = 0 ... }`
public struct EnumSyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var documentation: [String]
    public var attributes: [AttributeSyntax]
    public var cases: [EnumCaseSyntax]
    public var reserved: [ReservedSyntax]
}

/// `name = 3`
public struct EnumCaseSyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var value: IntegerSyntax
    public var documentation: [String]
    public var attributes: [AttributeSyntax]
}
