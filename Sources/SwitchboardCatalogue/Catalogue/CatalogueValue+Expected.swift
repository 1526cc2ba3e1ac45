/// Reading a key as the kind of value the catalogue expects there: a key present with another
/// kind is an error naming it, not a key ignored (`status: [disabled]` would leave a service
/// enabled, `services: none` would read as no services).
extension CatalogueValue {
    /// `text`, `a list` or `a mapping`, for errors.
    var kind: String {
        switch self {
        case .scalar: return "text"
        case .list: return "a list"
        case .mapping: return "a mapping"
        }
    }

    /// The text under `key` of this mapping; `nil` when the key is absent. `owner` (a service
    /// or rpc) is named in the error.
    func text(at key: String, file: String, of owner: String? = nil) throws(CatalogueError) -> String? {
        guard let value = self[key] else { return nil }
        guard let text = value.text else { throw Self.wrongKind(key, of: owner, file: file, expected: "text", found: value) }
        return text
    }

    /// The items under `key` of this mapping; `nil` when the key is absent. An empty value
    /// (`key:` with nothing after it, YAML's null) is no items, as a reader of YAML would take it.
    func items(at key: String, file: String, of owner: String? = nil) throws(CatalogueError) -> [CatalogueValue]? {
        guard let value = self[key] else { return nil }
        if let items = value.items { return items }
        if value.text == "" { return [] }
        throw Self.wrongKind(key, of: owner, file: file, expected: "a list", found: value)
    }

    static func wrongKind(_ key: String, of owner: String?, file: String, expected: String, found: CatalogueValue) -> CatalogueError {
        CatalogueError(file: file, "'\(key)'\(owner.map { " of \($0)" } ?? "") must be \(expected), not \(found.kind)")
    }
}
