/// How deeply objects and arrays nest in JSON text a writer made: what an `Any` written as
/// text (the schema-driven codec's) is held to, as ``JSONWriter`` holds its own output.
package enum JSONNesting {
    /// The most objects and arrays that enclose anything in `json`; brackets in strings do not
    /// count. `json` is valid JSON (as a writer made it): one pass, no allocation.
    package static func deepest(in json: some Sequence<UInt8>) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in json {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
            default:
                break
            }
        }
        return deepest
    }
}
