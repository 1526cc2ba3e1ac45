import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads files the tool wrote (or would write) without trusting what now stands in their
/// place: only a regular file is read, a final symbolic link is not followed, and no more
/// than asked is read. A FIFO of that name blocked the read for ever and a link to
/// `/dev/zero` never ended.
package enum RegularFile {
    /// At most `limit` bytes from the start of the regular file at `path`; `nil` when nothing
    /// readable is there or it is not a regular file.
    package static func prefix(of path: String, upTo limit: Int) -> Data? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let wanted = max(0, min(limit, Int(status.st_size)))
        var data = Data(count: wanted)
        let count = data.withUnsafeMutableBytes { buffer -> Int in
            var total = 0
            while total < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + total, buffer.count - total)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                total += count
            }
            return total
        }
        return data.prefix(count)
    }

    /// Whether the regular file at `path` holds exactly `expected`; reads at most one byte more.
    package static func holds(_ expected: Data, at path: String) -> Bool? {
        prefix(of: path, upTo: expected.count + 1).map { $0 == expected }
    }
}
