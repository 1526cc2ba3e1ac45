/// A request's path parameters by name, still percent-encoded, in template order.
///
/// A route has a handful of parameters at most, so they are kept as a list and found by
/// comparing names: a `Dictionary` allocated its storage and hashed each name with SipHash
/// on every request, about 2,000 instructions for one parameter. It reads as the dictionary
/// it replaces did (`for (name, value) in`, `keys`, `values`, subscripts); ``dictionary``
/// gives one where a `[String: String]` is needed. Names are unique: a name given again
/// (a template that repeats one) keeps its last value, as the dictionary did.
public struct PathParameters: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One parameter, labelled as a dictionary's elements are: its name and encoded value.
    public typealias Element = (key: String, value: String)

    private var parameters: [Element]

    /// No parameters.
    public init() { parameters = [] }

    /// The parameters of `dictionary` (in name order, so equal dictionaries give equal lists).
    public init(_ dictionary: [String: String]) {
        parameters = dictionary.sorted { $0.key < $1.key }
    }

    /// The parameters written as a literal; a repeated name keeps its last value.
    public init(dictionaryLiteral elements: (String, String)...) {
        parameters = []
        for (name, value) in elements { self[name] = value }
    }

    /// The encoded value of `name`, or `nil` when the path has no such parameter; setting
    /// `nil` removes it.
    public subscript(name: String) -> String? {
        get { parameters.first { $0.key == name }?.value }
        set {
            let index = parameters.firstIndex { $0.key == name }
            switch (index, newValue) {
            case let (index?, value?): parameters[index].value = value
            case let (index?, nil): parameters.remove(at: index)
            case let (nil, value?): parameters.append((name, value))
            case (nil, nil): break
            }
        }
    }

    /// Adds a matched parameter; a name the template repeats keeps its last value.
    mutating func append(name: String, value: String) {
        if let index = parameters.firstIndex(where: { $0.key == name }) {
            parameters[index].value = value
        } else {
            parameters.append((name, value))
        }
    }

    /// The names, in template order.
    public var keys: [String] { parameters.map(\.key) }
    /// The encoded values, in template order.
    public var values: [String] { parameters.map(\.value) }
    /// How many parameters there are.
    public var count: Int { parameters.count }
    /// Whether there are none.
    public var isEmpty: Bool { parameters.isEmpty }
    /// The parameters as a dictionary.
    public var dictionary: [String: String] {
        Dictionary(parameters, uniquingKeysWith: { _, last in last })
    }

    /// The parameters in template order.
    public func makeIterator() -> IndexingIterator<[Element]> { parameters.makeIterator() }

    /// The names only: values can be identifiers that logs must not hold.
    public var description: String { "PathParameters(\(keys.joined(separator: ", ")))" }

    /// Equal when they hold the same names with the same values, in any order.
    public static func == (lhs: PathParameters, rhs: PathParameters) -> Bool {
        // Names are unique, so equal counts and every name found with its value is equality.
        lhs.count == rhs.count && lhs.allSatisfy { rhs[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(dictionary) }
}
