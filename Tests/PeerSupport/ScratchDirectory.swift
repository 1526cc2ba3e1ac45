import Foundation

/// Temporary directories for test files (certificates, descriptor sets), removed when the
/// test process exits, so repeated runs leave nothing behind in the temporary directory.
public enum ScratchDirectory {
    private static let made = NSLock()
    nonisolated(unsafe) private static var paths: [String] = []
    private static let removeAtExit: Void = { atexit { ScratchDirectory.removeAll() } }()

    /// A new, empty directory whose name starts with `prefix`.
    public static func make(_ prefix: String) throws -> URL {
        _ = removeAtExit
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        made.withLock { paths.append(url.path) }
        return url
    }

    private static func removeAll() {
        for path in made.withLock({ paths }) { try? FileManager.default.removeItem(atPath: path) }
    }
}
