extension Array where Element == UInt8 {
    /// Makes room for `extra` more bytes, doubling as appends do. Reserving the exact total
    /// for each frame or header block reallocated the buffer every time; the first reservation
    /// takes enough for a small call's frames (headers, data, trailers) at once.
    mutating func reserveGrowing(_ extra: Int) {
        let needed = count + extra
        if capacity < needed { reserveCapacity(Swift.max(needed, 2 * capacity, 512)) }
    }
}
