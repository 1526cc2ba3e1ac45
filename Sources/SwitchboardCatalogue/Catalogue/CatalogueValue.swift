/// One value of a catalogue file: text, a list or a mapping. Scalars stay text; readers
/// interpret them (`1-2` is a version range, `enabled` a status).
public indirect enum CatalogueValue: Sendable, Hashable {
    /// Text: a plain or quoted scalar.
    case scalar(String)
    /// A block or flow list.
    case list([CatalogueValue])
    /// Keys in file order.
    case mapping([CatalogueEntry])

    /// The value under `key` of a mapping.
    public subscript(key: String) -> CatalogueValue? {
        guard case let .mapping(entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    /// The text of a scalar.
    public var text: String? {
        if case let .scalar(text) = self { return text }
        return nil
    }

    /// The items of a list.
    public var items: [CatalogueValue]? {
        if case let .list(items) = self { return items }
        return nil
    }
}

/// A key and its value in a mapping.
public struct CatalogueEntry: Sendable, Hashable {
    /// The key.
    public var key: String
    /// Its value.
    public var value: CatalogueValue

    /// An entry.
    public init(key: String, value: CatalogueValue) {
        self.key = key
        self.value = value
    }
}
