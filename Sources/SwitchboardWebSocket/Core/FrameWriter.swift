/// Encodes frames. Clients mask every frame with a fresh random key (RFC 6455 §5.3).
public enum FrameWriter {
    /// The bytes of one frame carrying `payload`.
    public static func frame(
        opcode: WebSocketOpcode, payload: some Collection<UInt8>, fin: Bool = true, mask: Bool
    ) -> [UInt8] {
        var output: [UInt8] = []
        let count = payload.count
        output.reserveCapacity(count + 14)
        output.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = mask ? 0x80 : 0
        if count < 126 {
            output.append(maskBit | UInt8(count))
        } else if count <= 0xFFFF {
            output.append(maskBit | 126)
            output.append(UInt8(count >> 8))
            output.append(UInt8(count & 0xFF))
        } else {
            output.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { output.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        guard mask else {
            output.append(contentsOf: payload)
            return output
        }
        var generator = SystemRandomNumberGenerator()
        let key = withUnsafeBytes(of: generator.next() as UInt32) { Array($0) }
        output.append(contentsOf: key)
        let start = output.count
        output.append(contentsOf: payload)
        output.withUnsafeMutableBufferPointer { buffer in
            for index in 0..<count { buffer[start + index] ^= key[index & 3] }
        }
        return output
    }

    /// The payload of a close frame: the code, then the UTF-8 reason cut to fit 125 bytes.
    public static func closePayload(code: WebSocketCloseCode, reason: String) -> [UInt8] {
        var payload = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var reasonBytes = Array(reason.utf8.prefix(123))
        // Do not cut a scalar in half.
        while !reasonBytes.isEmpty {
            var validator = UTF8StreamValidator()
            if validator.feed(reasonBytes), validator.isComplete { break }
            reasonBytes.removeLast()
        }
        payload += reasonBytes
        return payload
    }
}
