import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file operations the file-drop protocol rests on: a document becomes visible only
/// complete (written to a hidden temporary name, then renamed, which is atomic within a
/// folder), and a claim is a rename that only one process can win.
enum FileDropFiles {
    /// Writes `data` to `url` atomically: readers see no file or the whole file. With
    /// `durable`, the data and the rename survive a power cut too (fsync of file and folder).
    static func writeAtomically(_ data: Data, to url: URL, durable: Bool) throws {
        let folder = url.deletingLastPathComponent()
        let temporary = folder.appendingPathComponent("." + url.lastPathComponent + "." + String(UInt32.random(in: .min ... .max), radix: 16) + ".tmp")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var written = 0
        let failure: Int32? = data.withUnsafeBytes { buffer -> Int32? in
            while written < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                written += count
            }
            return nil
        }
        if failure == nil, durable, fsync(descriptor) != 0 {
            close(descriptor)
            unlink(temporary.path)
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        close(descriptor)
        if let failure {
            unlink(temporary.path)
            throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO)
        }
        guard rename(temporary.path, url.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
        if durable { syncFolder(folder) }
    }

    /// Renames `from` to `to`; `false` when `from` is gone (another process took it).
    static func move(_ from: URL, to: URL, durable: Bool) -> Bool {
        guard rename(from.path, to.path) == 0 else { return false }
        if durable { syncFolder(to.deletingLastPathComponent()) }
        return true
    }

    static func syncFolder(_ folder: URL) {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// A document's bytes, refusing files larger than `limit` before reading them.
    static func read(_ url: URL, limit: Int) -> Data? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: limit + 1), data.count <= limit else { return nil }
        return data
    }

    static func exists(_ url: URL) -> Bool { access(url.path, F_OK) == 0 }

    /// Names of the regular entries of `folder`, sorted.
    static func names(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    static func isFolder(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
