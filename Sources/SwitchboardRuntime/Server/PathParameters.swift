/// A request's path parameters by name, still percent-encoded, in template order.
///
/// A route has a handful of parameters at most, so they are kept as a list and found by
/// comparing names: a `Dictionary` allocated its storage and hashed each name with SipHash
/// on every request, about 2,000 instructions for one parameter.
public struct PathParameters: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One parameter: its name in the template and its encoded value.
    public struct Parameter: Sendable, Hashable {
        /// The name between the template's braces.
        public let name: String
        /// The segment's text, still percent-encoded.
        public let value: String
    }

    private var parameters: [Parameter]

    /// No parameters.
    public init() { parameters = [] }

    /// The parameters of `dictionary` (in name order, so equal dictionaries give equal lists).
    public init(_ dictionary: [String: String]) {
        parameters = dictionary.sorted { $0.key < $1.key }.map { Parameter(name: $0.key, value: $0.value) }
    }

    /// The parameters written as a literal; a repeated name keeps its last value.
    public init(dictionaryLiteral elements: (String, String)...) {
        parameters = []
        for (name, value) in elements { self[name] = value }
    }

    /// The encoded value of `name`, or `nil` when the path has no such parameter; setting
    /// `nil` removes it.
    public subscript(name: String) -> String? {
        get { parameters.first { $0.name == name }?.value }
        set {
            let index = parameters.firstIndex { $0.name == name }
            switch (index, newValue) {
            case let (index?, value?): parameters[index] = Parameter(name: name, value: value)
            case let (index?, nil): parameters.remove(at: index)
            case let (nil, value?): parameters.append(Parameter(name: name, value: value))
            case (nil, nil): break
            }
        }
    }

    /// Adds a parameter the caller knows is not there yet (a template names each once).
    mutating func appendNew(name: String, value: String) {
        parameters.append(Parameter(name: name, value: value))
    }

    /// The names, in template order.
    public var keys: [String] { parameters.map(\.name) }
    /// How many parameters there are.
    public var count: Int { parameters.count }
    /// Whether there are none.
    public var isEmpty: Bool { parameters.isEmpty }
    /// The parameters as a dictionary.
    public var dictionary: [String: String] {
        Dictionary(parameters.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The parameters in template order.
    public func makeIterator() -> IndexingIterator<[Parameter]> { parameters.makeIterator() }

    /// The names only: values can be identifiers that logs must not hold.
    public var description: String { "PathParameters(\(keys.joined(separator: ", ")))" }

    /// Equal when they hold the same names with the same values, in any order.
    public static func == (lhs: PathParameters, rhs: PathParameters) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs[$0.name] == $0.value }
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(dictionary) }
}
