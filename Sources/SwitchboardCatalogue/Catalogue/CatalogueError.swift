/// Why a catalogue could not be read.
public struct CatalogueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file, relative to the catalogue's directory.
    public var file: String
    /// The 1-based line, when the problem has one.
    public var line: Int?
    /// What is wrong.
    public var message: String

    /// An error in `file`.
    public init(file: String, line: Int? = nil, _ message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String { "\(file)\(line.map { ":\($0)" } ?? ""): \(message)" }
}
