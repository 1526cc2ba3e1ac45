/// Base64 for the JSON codec, written directly into the output buffer.
///
/// Encoding uses the standard alphabet with padding, as protobuf JSON requires.
/// Decoding accepts the standard and URL-safe alphabets, with or without padding.
public enum Base64 {
    @usableFromInline
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends the base64 text of `input` to `output`.
    public static func encode(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) {
        output.reserveCapacity(output.count + (input.count + 2) / 3 * 4)
        var index = 0
        let count = input.count
        while index + 3 <= count {
            let first = UInt32(input[index]) << 16
            let second = UInt32(input[index + 1]) << 8
            let value: UInt32 = first | second | UInt32(input[index + 2])
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            output.append(alphabet[Int(value >> 6 & 63)])
            output.append(alphabet[Int(value & 63)])
            index += 3
        }
        let rest = count - index
        if rest == 1 {
            let value = UInt32(input[index]) << 16
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            output.append(UInt8(ascii: "="))
            output.append(UInt8(ascii: "="))
        } else if rest == 2 {
            let first = UInt32(input[index]) << 16
            let value: UInt32 = first | UInt32(input[index + 1]) << 8
            output.append(alphabet[Int(value >> 18 & 63)])
            output.append(alphabet[Int(value >> 12 & 63)])
            output.append(alphabet[Int(value >> 6 & 63)])
            output.append(UInt8(ascii: "="))
        }
    }

    /// Returns the base64 text of `input` as a string.
    public static func encodedString(_ input: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        Array(input).withUnsafeBytes { encode($0, into: &output) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Sextet values by input byte for both alphabets; 0xFF marks an invalid byte.
    @usableFromInline
    static let sextets: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        table[Int(UInt8(ascii: "-"))] = 62
        table[Int(UInt8(ascii: "_"))] = 63
        return table
    }()

    /// Decodes base64 text, or returns `nil` if it is malformed.
    public static func decode(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        var count = input.count
        // Strip up to two padding characters; padding is optional.
        var padding = 0
        while count > 0, input[count - 1] == UInt8(ascii: "="), padding < 2 {
            count -= 1
            padding += 1
        }
        if padding > 0, (count + padding) % 4 != 0 { return nil }
        if count % 4 == 1 { return nil }
        var output = [UInt8](repeating: 0, count: count / 4 * 3 + (count % 4 == 0 ? 0 : count % 4 - 1))
        let valid = sextets.withUnsafeBufferPointer { table in
            output.withUnsafeMutableBufferPointer { out in
                var accumulator: UInt32 = 0
                var bits = 0
                var written = 0
                var invalid: UInt8 = 0
                for index in 0..<count {
                    let value = table[Int(input[index])]
                    invalid |= value
                    accumulator = accumulator << 6 | UInt32(value & 63)
                    bits += 6
                    if bits >= 8 {
                        bits -= 8
                        out[written] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                        written += 1
                    }
                }
                // Valid sextets are below 64; 0xFF sets the top bits.
                return invalid & 0xC0 == 0
            }
        }
        guard valid else { return nil }
        // Leftover bits must be zero in canonical text; accept as protobuf does.
        return output
    }
}
