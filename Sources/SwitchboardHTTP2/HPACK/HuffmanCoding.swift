/// HPACK's Huffman code (RFC 7541 §5.2): encoding, and decoding four bits at a time through a
/// state table built once from the code, so decoding costs a table step per nibble.
enum HuffmanCoding {
    /// The encoded length of `bytes` in octets; the table is read through one pointer.
    static func encodedLength(of bytes: UnsafeBufferPointer<UInt8>) -> Int {
        HuffmanCodeTable.codes.withUnsafeBufferPointer { codes in
            var bits = 0
            for byte in bytes { bits &+= Int(codes[Int(byte)].length) }
            return (bits + 7) / 8
        }
    }

    /// Appends the code of `bytes`, `encodedLength` octets (from ``encodedLength(of:)``): the
    /// output grows once and is written in place, and the table is read through one pointer.
    static func encode(_ bytes: UnsafeBufferPointer<UInt8>, encodedLength: Int, into output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: encodedLength))
        output.withUnsafeMutableBufferPointer { buffer in
            HuffmanCodeTable.codes.withUnsafeBufferPointer { codes in
                var pending: UInt64 = 0
                var pendingBits = 0
                var index = start
                for byte in bytes {
                    let (code, length) = codes[Int(byte)]
                    pending = (pending << UInt64(length)) | UInt64(code)
                    pendingBits &+= Int(length)
                    while pendingBits >= 8 {
                        pendingBits &-= 8
                        // Unsafe buffers are not bounds-checked in release builds: a wrong
                        // `encodedLength` must stop here, not write past the array.
                        precondition(index < buffer.count, "the length encodedLength(of:) gave")
                        buffer[index] = UInt8(truncatingIfNeeded: pending >> UInt64(pendingBits))
                        index &+= 1
                    }
                }
                if pendingBits > 0 {
                    let padding = 8 - pendingBits
                    precondition(index < buffer.count, "the length encodedLength(of:) gave")
                    buffer[index] = UInt8(truncatingIfNeeded: (pending << UInt64(padding)) | ((1 << UInt64(padding)) - 1))
                    index &+= 1
                }
                precondition(index == start + encodedLength, "the length encodedLength(of:) gave")
            }
        }
    }

    /// The most bytes `count` coded bytes decode to: no code is shorter than five bits.
    static func maximumDecodedLength(of count: Int) -> Int { count * 8 / 5 + 1 }

    /// Decodes `bytes` into `output`, which holds at least ``maximumDecodedLength(of:)``
    /// bytes, and returns how many it wrote: no appends, so no capacity check a symbol.
    /// Fails on EOS or on padding that is longer than 7 bits or not all ones.
    static func decode(_ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<UInt8>) throws(HPACKError) -> Int {
        precondition(output.count >= maximumDecodedLength(of: bytes.count), "room for the longest result")
        let table = HuffmanDecodingTable.shared
        return try table.steps.withUnsafeBufferPointer { steps throws(HPACKError) -> Int in
            var state = 0
            var written = 0
            var flags: UInt8 = 0
            for byte in bytes {
                // Two nibbles, each a table step that emits at most one symbol.
                let high = steps[state << 4 | Int(byte >> 4)]
                output[written] = high.symbol
                written &+= Int(high.flags & HuffmanDecodingTable.emits)
                let low = steps[Int(high.next) << 4 | Int(byte & 0x0F)]
                output[written] = low.symbol
                written &+= Int(low.flags & HuffmanDecodingTable.emits)
                flags |= high.flags | low.flags
                state = Int(low.next)
            }
            guard flags & HuffmanDecodingTable.failed == 0, table.mayEndIn[state] else { throw .invalidHuffmanCode }
            return written
        }
    }
}

/// The decoder's states are the internal nodes of the code's tree (the root is 0); from each,
/// a nibble leads to another, emitting at most one symbol (no code is shorter than 5 bits).
final class HuffmanDecodingTable: Sendable {
    static let shared = HuffmanDecodingTable()

    static let emits: UInt8 = 1
    static let failed: UInt8 = 2

    struct Step: Sendable {
        var next: UInt8
        var symbol: UInt8
        var flags: UInt8
    }

    /// 16 steps per state.
    let steps: [Step]
    /// Whether input may end in a state: the root, or a run of at most 7 one-bits from it
    /// (a prefix of EOS, which is all ones).
    let mayEndIn: [Bool]

    private init() {
        // The tree: children of internal nodes; a child is a node (>= 0) or a symbol (-1 - symbol).
        var children: [[Int]] = [[0, 0]]
        var isSet: [[Bool]] = [[false, false]]
        for (symbol, entry) in HuffmanCodeTable.codes.enumerated() {
            var node = 0
            for position in stride(from: Int(entry.length) - 1, through: 0, by: -1) {
                let bit = Int((entry.code >> UInt32(position)) & 1)
                if position == 0 {
                    children[node][bit] = -1 - symbol
                    isSet[node][bit] = true
                } else if isSet[node][bit] {
                    node = children[node][bit]
                } else {
                    children.append([0, 0])
                    isSet.append([false, false])
                    children[node][bit] = children.count - 1
                    isSet[node][bit] = true
                    node = children.count - 1
                }
            }
        }
        // Which nodes are reached from the root by ones alone, and how deep.
        var onesDepth = [Int?](repeating: nil, count: children.count)
        var node = 0
        var depth = 0
        while node >= 0 {
            onesDepth[node] = depth
            let next = children[node][1]
            depth += 1
            node = next > 0 ? next : -1
        }
        mayEndIn = (0..<children.count).map { state in state == 0 || (onesDepth[state].map { $0 <= 7 } ?? false) }

        var steps: [Step] = []
        steps.reserveCapacity(children.count * 16)
        for state in 0..<children.count {
            for nibble in 0..<16 {
                var node = state
                var step = Step(next: 0, symbol: 0, flags: 0)
                for position in stride(from: 3, through: 0, by: -1) {
                    let child = children[node][(nibble >> position) & 1]
                    if child >= 0 {
                        node = child
                        continue
                    }
                    let symbol = -1 - child
                    if symbol == 256 {
                        step.flags |= Self.failed
                        break
                    }
                    step.symbol = UInt8(symbol)
                    step.flags |= Self.emits
                    node = 0
                }
                step.next = UInt8(node)
                steps.append(step)
            }
        }
        self.steps = steps
    }
}
