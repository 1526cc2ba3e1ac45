@testable import SwitchboardWebSocket
import Testing

/// The word-at-a-time mask against the RFC's byte-at-a-time definition, and the keys.
@Suite struct MaskingTests {
    @Test func wideMaskMatchesTheDefinitionAtEveryLength() {
        let key: UInt32 = 0xA1B2_C3D4
        let keyBytes = withUnsafeBytes(of: key) { Array($0) }
        for length in 0..<40 {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            var masked = payload
            masked.withUnsafeMutableBytes { FrameWriter.applyMask(key, to: $0) }
            let expected = payload.enumerated().map { $0.element ^ keyBytes[$0.offset % 4] }
            #expect(masked == expected, "length \(length)")
        }
    }

    @Test func maskedFramesCarryTheirKeyAndParseBack() throws {
        let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0) }
        let frame = FrameWriter.frame(opcode: .binary, payload: payload, maskingKey: 0x0102_0304)
        // Header: FIN|binary, MASK|126, 16-bit length, then the key as written in memory.
        #expect(Array(frame[0..<4]) == [0x82, 0xFE, 0x03, 0xE8])
        #expect(Array(frame[4..<8]) == withUnsafeBytes(of: UInt32(0x0102_0304)) { Array($0) })
        var parser = FrameParser(expectMasked: true, maximumFrameSize: 1 << 20)
        parser.append(frame)
        var unmasked: [UInt8] = []
        var events = 0
        while let event = try parser.next(), events < 100 {
            events += 1
            if case let .payload(chunk) = event { unmasked += chunk }
        }
        #expect(unmasked == payload)
    }

    @Test func keysAreFreshAcrossBatches() {
        var keys = MaskingKeys()
        let drawn = (0..<1000).map { _ in keys.next() }
        // 1,000 random 32-bit keys collide with probability about 1e-4; a stuck or
        // repeating source would collide wholesale.
        #expect(Set(drawn).count >= 998)
        #expect(drawn.filter { $0 == 0 }.count <= 1)
    }
}

extension MaskingTests {
    @Test func maskingFromAnyOffsetMatchesTheDefinition() {
        let key: UInt32 = 0x1122_3344
        let keyBytes = withUnsafeBytes(of: key) { Array($0) }
        for offset in 0..<8 {
            var bytes = [UInt8](repeating: 0, count: 13)
            bytes.withUnsafeMutableBytes { FrameWriter.applyMask(FrameWriter.maskingKey(key, from: offset), to: $0) }
            #expect(bytes == (0..<13).map { keyBytes[($0 + offset) % 4] }, "offset \(offset)")
        }
    }

    @Test func everyLengthFormAndPayloadKindFramesTheSameBytes() throws {
        // A contiguous payload takes the copy fast path; a lazy one the general path.
        for length in [0, 1, 125, 126, 127, 65535, 65536, 70000] {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let fast = FrameWriter.frame(opcode: .binary, payload: bytes, maskingKey: 0xDEAD_BEEF)
            let general = FrameWriter.frame(opcode: .binary, payload: bytes.lazy.map { $0 }, maskingKey: 0xDEAD_BEEF)
            #expect(fast == general, "length \(length)")
            var parser = FrameParser(expectMasked: true, maximumFrameSize: 1 << 20)
            // Fed in odd pieces, so unmasking resumes mid-key.
            var unmasked: [UInt8] = [], index = 0, piece = 1
            while index < fast.count {
                parser.append(fast[index..<min(fast.count, index + piece)])
                index += piece
                piece = piece % 7 + 1
                while let event = try parser.next() {
                    if case let .payload(chunk) = event { unmasked += chunk }
                    if case .frameEnd = event { break }
                }
            }
            #expect(unmasked == bytes, "length \(length)")
        }
    }
}

extension MaskingTests {
    /// RFC 6455 §5.7: "Hello" in one masked text frame with the key 37 fa 21 3d.
    @Test func maskedHelloFromTheRFC() {
        let key = [UInt8]([0x37, 0xFA, 0x21, 0x3D]).withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        let frame = FrameWriter.frame(opcode: .text, payload: Array("Hello".utf8), maskingKey: key)
        #expect(frame == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }
}
