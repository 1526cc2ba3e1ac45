import SwitchboardIO

/// Encodes frames. Clients mask every frame with a fresh random key (RFC 6455 §5.3).
public enum FrameWriter {
    /// The bytes of one frame carrying `payload`, masked with a fresh key when `mask` is set.
    public static func frame(
        opcode: WebSocketOpcode, payload: some Collection<UInt8>, fin: Bool = true, mask: Bool
    ) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return frame(opcode: opcode, payload: payload, fin: fin, maskingKey: mask ? generator.next() : nil)
    }

    /// The bytes of one frame carrying `payload`, masked with `maskingKey` unless it is `nil`.
    public static func frame(
        opcode: WebSocketOpcode, payload: some Collection<UInt8>, fin: Bool = true, maskingKey: UInt32?
    ) -> [UInt8] {
        let count = payload.count
        return frame(opcode: opcode, payloadCount: count, fin: fin, maskingKey: maskingKey) { body in
            let copied: Bool? = payload.withContiguousStorageIfAvailable { source in
                if let base = source.baseAddress { body.baseAddress!.copyMemory(from: base, byteCount: count) }
                return true
            }
            if copied == nil { _ = body.initializeMemory(as: UInt8.self, from: payload) }
        }
    }

    /// The bytes of one frame whose `payloadCount` payload bytes `writePayload` writes in place,
    /// masked afterwards with `maskingKey` unless it is `nil`. The payload is never copied:
    /// a caller that can write its message into memory (an encoder) skips a buffer.
    /// `writePayload` must write every one of the bytes it is given: the buffer is not
    /// cleared first, so a byte it skips goes out as whatever the memory held.
    public static func frame(
        opcode: WebSocketOpcode, payloadCount count: Int, fin: Bool = true, maskingKey: UInt32?,
        writePayload: (UnsafeMutableRawBufferPointer) -> Void
    ) -> [UInt8] {
        // Sizes first, then one buffer written once: header, payload, mask in place.
        let lengthSize = count < 126 ? 0 : count <= 0xFFFF ? 2 : 8
        let headerSize = 2 + lengthSize + (maskingKey == nil ? 0 : 4)
        // Every byte is written below: the header here, the payload by `writePayload`.
        var frame = UnfilledByteArray.make(count: headerSize + count)
        frame.withUnsafeMutableBufferPointer { buffer in
            let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
            buffer[0] = (fin ? 0x80 : 0) | opcode.rawValue
            switch lengthSize {
            case 0: buffer[1] = maskBit | UInt8(count)
            case 2:
                buffer[1] = maskBit | 126
                buffer[2] = UInt8(count >> 8)
                buffer[3] = UInt8(truncatingIfNeeded: count)
            default:
                buffer[1] = maskBit | 127
                for index in 0..<8 { buffer[2 + index] = UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(56 - 8 * index)) }
            }
            if let maskingKey {
                withUnsafeBytes(of: maskingKey) { key in
                    for index in 0..<4 { buffer[2 + lengthSize + index] = key[index] }
                }
            }
            let body = UnsafeMutableRawBufferPointer(UnsafeMutableBufferPointer(rebasing: buffer[headerSize...]))
            writePayload(body)
            if let maskingKey { applyMask(maskingKey, to: body) }
        }
        return frame
    }

    /// Whether `frame`, one whole frame as made here, is a close frame.
    static func isCloseFrame(_ frame: [UInt8]) -> Bool {
        frame.first.map { $0 & 0x0F } == WebSocketOpcode.close.rawValue
    }

    /// XORs `bytes` with the key repeated, sixteen bytes at a time where it can.
    static func applyMask(_ key: UInt32, to bytes: UnsafeMutableRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        // The key's bytes in memory order, the order the wire applies them in.
        let wide = UInt64(key) | UInt64(key) << 32
        var index = 0
        // Every frame each side sends or receives passes here: vector registers halve the work.
        let vector = withUnsafeBytes(of: (wide, wide)) { $0.loadUnaligned(as: SIMD16<UInt8>.self) }
        while index + 16 <= bytes.count {
            let chunk = bytes.loadUnaligned(fromByteOffset: index, as: SIMD16<UInt8>.self) ^ vector
            bytes.storeBytes(of: chunk, toByteOffset: index, as: SIMD16<UInt8>.self)
            index += 16
        }
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ wide
            bytes.storeBytes(of: word, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        withUnsafeBytes(of: key) { keyBytes in
            while index < bytes.count {
                bytes[index] ^= keyBytes[index & 3]
                index += 1
            }
        }
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

extension FrameWriter {
    /// `key` as it applies from byte `offset` of the payload on: its bytes rotated.
    static func maskingKey(_ key: UInt32, from offset: Int) -> UInt32 {
        let shift = offset & 3
        guard shift != 0 else { return key }
        var rotated: UInt32 = 0
        withUnsafeBytes(of: key) { original in
            withUnsafeMutableBytes(of: &rotated) { target in
                for index in 0..<4 { target[index] = original[(index + shift) & 3] }
            }
        }
        return rotated
    }
}
