import Foundation

extension ProtoFieldMask {
    /// A mask of `paths` (snake_case field names joined by dots).
    public init(paths: String...) {
        self.init(paths: paths)
    }

    /// Not an object of its fields in JSON.
    public static var jsonIsFieldObject: Bool { false }

    /// The paths in lowerCamelCase joined by commas: `"user.displayName,photo"`. A path that
    /// would not come back the same (an uppercase letter, `_` not before a lowercase letter,
    /// a comma, or a lone empty path, which reads back as no path) cannot be written.
    public func encodeJSON(into writer: inout JSONWriter) throws(JSONEncodingError) {
        // `""` reads back as the empty mask; `["", ""]` is `","`, which comes back.
        if paths.count == 1 && paths[0].isEmpty { throw .invalidFieldMaskPath("") }
        var text = ""
        for (index, path) in paths.enumerated() {
            if index > 0 { text += "," }
            var underscore = false
            for scalar in path.unicodeScalars {
                // A comma would split the path in two when read back.
                guard scalar != "," else { throw .invalidFieldMaskPath(path) }
                if underscore {
                    guard ("a"..."z").contains(scalar) else { throw .invalidFieldMaskPath(path) }
                    text.unicodeScalars.append(contentsOf: String(scalar).uppercased().unicodeScalars)
                    underscore = false
                } else if scalar == "_" {
                    underscore = true
                } else {
                    guard !("A"..."Z").contains(scalar) else { throw .invalidFieldMaskPath(path) }
                    text.unicodeScalars.append(scalar)
                }
            }
            if underscore { throw .invalidFieldMaskPath(path) }
        }
        writer.writeString(text)
    }

    /// Reads comma-separated lowerCamelCase paths back to snake_case; `_` is refused, since
    /// the JSON form never contains one.
    public mutating func decodeJSON(from reader: inout JSONReader) throws(JSONDecodingError) {
        reader.skipWhitespace()
        let offset = reader.offset
        let text = try reader.readString()
        paths = []
        guard !text.isEmpty else { return }
        // On the comma itself, as protobuf splits: `split` on the `String` compares characters,
        // and a comma followed by a combining mark is one character that is not a comma.
        for part in text.unicodeScalars.split(separator: ",", omittingEmptySubsequences: false) {
            var path = ""
            for scalar in part {
                if scalar == "_" { throw .invalidFieldMask(offset: offset) }
                if ("A"..."Z").contains(scalar) {
                    path += "_" + String(scalar).lowercased()
                } else {
                    path.unicodeScalars.append(scalar)
                }
            }
            paths.append(path)
        }
    }
}
