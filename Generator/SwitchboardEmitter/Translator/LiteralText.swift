/// Schema text written into generated source as a string literal. A field's JSON name may hold
/// any text protoc takes as a `json_name` (quotes, backslashes, controls, non-ASCII), so each
/// place it lands escapes it for the language it lands in.
enum LiteralText {
    /// `text` as the inside of a Swift string literal (`"..."`, a `String` or a `StaticString`):
    /// quotes and backslashes escaped, anything but printable ASCII as `\u{...}`, so the literal
    /// is plain ASCII on one line whatever the text holds. Printable ASCII is left as it is.
    static func swift(_ text: String) -> String {
        escaped(text) { scalar, result in
            if scalar.value >= 0x20 && scalar.value < 0x7F {
                result.unicodeScalars.append(scalar)
            } else {
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            }
        }
    }

    /// `text` as the inside of a JSON string, escaped as the runtime's `JSONWriter` escapes
    /// strings: quotes, backslashes and control characters; any other text as it is.
    static func json(_ text: String) -> String {
        escaped(text) { scalar, result in
            switch scalar {
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
    }

    /// `text` as the inside of a `.proto` string literal (a `json_name` option): quotes,
    /// backslashes and control characters escaped (other controls as three octal digits, which
    /// every protoc reads); any other text, UTF-8 included, as it is.
    static func proto(_ text: String) -> String {
        escaped(text) { scalar, result in
            if scalar.value < 0x20 || scalar.value == 0x7F {
                let octal = String(scalar.value, radix: 8)
                result += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
    }

    /// The escapes every quoted form here shares (quote, backslash, `\n`, `\r`, `\t`), also the
    /// catalogue's JSON-and-YAML strings; every other scalar goes to `other`, which appends it
    /// as its language needs.
    static func escaped(_ text: String, other: (Unicode.Scalar, inout String) -> Void) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default: other(scalar, &result)
            }
        }
        return result
    }
}
