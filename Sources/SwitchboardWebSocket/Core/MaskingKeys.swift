#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Masking keys for a client's frames, drawn from the system's secure generator in batches:
/// one system call yields 64 keys instead of one per frame. Every key is still fresh,
/// unpredictable and used once (RFC 6455 §10.3).
struct MaskingKeys: Sendable {
    private var batch: [UInt32] = []

    mutating func next() -> UInt32 {
        if batch.isEmpty { batch = Self.freshBatch() }
        return batch.removeLast()
    }

    private static func freshBatch() -> [UInt32] {
        var keys = [UInt32](repeating: 0, count: 64)
        let filled: Bool = keys.withUnsafeMutableBytes { buffer in
            #if canImport(Darwin)
            arc4random_buf(buffer.baseAddress!, buffer.count)
            return true
            #elseif canImport(Glibc)
            // The kernel's generator, as getrandom(2) reads it, through a descriptor kept open:
            // older C libraries export neither getrandom nor arc4random_buf to Swift.
            guard urandom >= 0 else { return false }
            return read(urandom, buffer.baseAddress!, buffer.count) == buffer.count
            #else
            return false
            #endif
        }
        if !filled {
            // The standard library's source, a key at a time.
            var generator = SystemRandomNumberGenerator()
            for index in keys.indices { keys[index] = generator.next() }
        }
        return keys
    }

    #if canImport(Glibc)
    private static let urandom = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
    #endif
}
