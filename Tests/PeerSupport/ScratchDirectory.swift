import Foundation

/// Temporary directories for test files (certificates, descriptor sets), removed when the
/// test process exits, so repeated runs leave nothing behind in the temporary directory.
public enum ScratchDirectory {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var paths: [String] = []
    private static let removeAtExit: Void = { atexit { ScratchDirectory.removeAll() } }()

    /// A fresh path whose name starts with `prefix`, removed at exit; for a tool that
    /// creates the directory itself.
    public static func reserve(_ prefix: String) -> URL {
        _ = removeAtExit
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        lock.withLock { paths.append(url.path) }
        return url
    }

    /// A new, empty directory whose name starts with `prefix`, removed at exit.
    public static func make(_ prefix: String) throws -> URL {
        let url = reserve(prefix)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static func removeAll() {
        for path in lock.withLock({ paths }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
