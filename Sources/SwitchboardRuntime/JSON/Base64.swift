import Foundation

/// Base64 for the JSON codec, written directly into the output buffer.
///
/// Encoding uses the standard alphabet with padding, as protobuf JSON requires.
/// Decoding accepts the standard and URL-safe alphabets, with or without padding.
public enum Base64 {
    @usableFromInline
    static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Appends the base64 text of `input` to `output`.
    ///
    /// The text's length is known up front, so `output` grows once and each three bytes
    /// become four characters stored straight into it; appending a character at a time paid a
    /// uniqueness and capacity check for each, about twenty instructions a character.
    public static func encode(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) {
        let count = input.count
        guard count > 0, let source = input.baseAddress else { return }
        let start = output.count
        let added = (count + 2) / 3 * 4
        output.reserveCapacity(start + added)
        // Every one of these bytes is written below.
        output.append(contentsOf: UnfilledBytes(count: added))
        alphabet.withUnsafeBufferPointer { table in
            output.withUnsafeMutableBufferPointer { buffer in
                let out = buffer.baseAddress! + start
                var index = 0
                var written = 0
                while count &- index >= 3 {
                    let value = UInt32(source.load(fromByteOffset: index, as: UInt8.self)) << 16
                        | UInt32(source.load(fromByteOffset: index &+ 1, as: UInt8.self)) << 8
                        | UInt32(source.load(fromByteOffset: index &+ 2, as: UInt8.self))
                    out[written] = table[Int(value >> 18 & 63)]
                    out[written &+ 1] = table[Int(value >> 12 & 63)]
                    out[written &+ 2] = table[Int(value >> 6 & 63)]
                    out[written &+ 3] = table[Int(value & 63)]
                    index &+= 3
                    written &+= 4
                }
                let rest = count - index
                guard rest > 0 else { return }
                var value = UInt32(source.load(fromByteOffset: index, as: UInt8.self)) << 16
                if rest == 2 { value |= UInt32(source.load(fromByteOffset: index + 1, as: UInt8.self)) << 8 }
                out[written] = table[Int(value >> 18 & 63)]
                out[written + 1] = table[Int(value >> 12 & 63)]
                out[written + 2] = rest == 2 ? table[Int(value >> 6 & 63)] : UInt8(ascii: "=")
                out[written + 3] = UInt8(ascii: "=")
            }
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
        guard let (characters, count) = decodedLength(of: input) else { return nil }
        var output = [UInt8](repeating: 0, count: count)
        let valid = output.withUnsafeMutableBytes { decode(input, characters: characters, into: $0.baseAddress) }
        return valid ? output : nil
    }

    /// Decodes base64 text into `Data`, or returns `nil` if it is malformed. Up to 1 KiB is
    /// decoded on the stack (see `StackBufferedData`), so no array is made first.
    public static func decodeData(_ input: UnsafeRawBufferPointer) -> Data? {
        guard let (characters, count) = decodedLength(of: input) else { return nil }
        guard count <= StackBufferedData.limit else { return decode(input).map { Data($0) } }
        return StackBufferedData.make(count: count) { decode(input, characters: characters, into: $0) }
    }

    /// How many characters hold data (padding stripped) and how many bytes they make, or
    /// `nil` when the padding or the length is wrong.
    @usableFromInline
    static func decodedLength(of input: UnsafeRawBufferPointer) -> (characters: Int, bytes: Int)? {
        var count = input.count
        // Strip up to two padding characters; padding is optional.
        var padding = 0
        while count > 0, input[count - 1] == UInt8(ascii: "="), padding < 2 {
            count -= 1
            padding += 1
        }
        if padding > 0, (count + padding) % 4 != 0 { return nil }
        if count % 4 == 1 { return nil }
        return (count, count / 4 * 3 + (count % 4 == 0 ? 0 : count % 4 - 1))
    }

    /// Decodes the first `characters` of `input` into `output`, which has room for what
    /// ``decodedLength(of:)`` said; `false` if a character is outside both alphabets.
    @usableFromInline
    static func decode(_ input: UnsafeRawBufferPointer, characters length: Int, into output: UnsafeMutableRawPointer?) -> Bool {
        guard length > 0, let out = output else { return true }
        return sextets.withUnsafeBufferPointer { table in
            // Four characters make three bytes: one lookup each, no running bit count.
            // An invalid character's 0xFF sets the top bits of `invalid`; what it does to
            // the bytes written does not matter, since they are then thrown away.
            var invalid: UInt8 = 0
            var index = 0
            var written = 0
            while length &- index >= 4 {
                let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                let c = table[Int(input[index + 2])], d = table[Int(input[index + 3])]
                invalid |= a | b | c | d
                let group = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                out.storeBytes(of: UInt8(truncatingIfNeeded: group >> 16), toByteOffset: written, as: UInt8.self)
                out.storeBytes(of: UInt8(truncatingIfNeeded: group >> 8), toByteOffset: written &+ 1, as: UInt8.self)
                out.storeBytes(of: UInt8(truncatingIfNeeded: group), toByteOffset: written &+ 2, as: UInt8.self)
                index &+= 4
                written &+= 3
            }
            // Two or three characters left make one or two bytes (one left is refused by
            // `decodedLength(of:)`). Leftover bits are not checked for zero, as protobuf
            // accepts them.
            if length - index >= 2 {
                let a = table[Int(input[index])], b = table[Int(input[index + 1])]
                invalid |= a | b
                var group = UInt32(a) << 18 | UInt32(b) << 12
                if length - index == 3 {
                    let c = table[Int(input[index + 2])]
                    invalid |= c
                    group |= UInt32(c) << 6
                    out.storeBytes(of: UInt8(truncatingIfNeeded: group >> 8), toByteOffset: written + 1, as: UInt8.self)
                }
                out.storeBytes(of: UInt8(truncatingIfNeeded: group >> 16), toByteOffset: written, as: UInt8.self)
            }
            // Valid sextets are below 64; 0xFF sets the top bits.
            return invalid & 0xC0 == 0
        }
    }
}
