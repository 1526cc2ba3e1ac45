import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Removes the documents of finished requests once they are older than the retention, so a
/// catalogue folder does not grow without bound: answered pairs (archived or never read),
/// withdrawn requests, and temporary files a crashed writer left.
///
/// A request is finished when it has an answer or was withdrawn; one still submitted or
/// claimed is never touched. Its documents go together, once the newest of them was written
/// more than the retention ago (file modification times, which renames keep).
enum FileDropRetention {
    /// Removes what in `folder` (an endpoint's or consumer's folder) and its archive was
    /// finished before `cutoff`; returns how many files it removed.
    static func prune(_ folder: URL, before cutoff: Date) -> Int {
        var removed = 0
        for place in [folder, folder.appendingPathComponent(FileDropDocument.archiveFolder)] {
            var documents: [String: (names: [String], newest: Date, finished: Bool, inProgress: Bool)] = [:]
            for name in FileDropFiles.names(in: place) {
                let url = place.appendingPathComponent(name)
                guard let modified = modificationDate(url) else { continue }
                if name.hasPrefix(".") {
                    // A document a writer died writing (a provider's own are cleaned on start).
                    if name.hasSuffix(".tmp"), modified < cutoff, unlink(url.path) == 0 { removed += 1 }
                    continue
                }
                guard let (id, suffix) = split(name) else { continue }
                var entry = documents[id] ?? ([], .distantPast, false, false)
                entry.names.append(name)
                entry.newest = max(entry.newest, modified)
                switch suffix {
                case FileDropDocument.requestSuffix, FileDropDocument.claimedSuffix: entry.inProgress = true
                default: entry.finished = true
                }
                documents[id] = entry
            }
            for (_, entry) in documents where entry.finished && !entry.inProgress && entry.newest < cutoff {
                // The response goes last: while it stays, the id counts as answered.
                let last = entry.names.filter { $0.hasSuffix(FileDropDocument.responseSuffix) }
                for name in entry.names.filter({ !$0.hasSuffix(FileDropDocument.responseSuffix) }) + last
                where unlink(place.appendingPathComponent(name).path) == 0 {
                    removed += 1
                }
            }
        }
        return removed
    }

    /// A document name's request id and state suffix.
    static func split(_ name: String) -> (String, String)? {
        for suffix in [FileDropDocument.requestSuffix, FileDropDocument.claimedSuffix, FileDropDocument.servedSuffix,
                       FileDropDocument.responseSuffix, FileDropDocument.withdrawnSuffix] where name.hasSuffix(suffix) {
            return (String(name.dropLast(suffix.count)), suffix)
        }
        return nil
    }

    /// When a regular file (not a link or folder) was last written.
    static func modificationDate(_ url: URL) -> Date? {
        var status = stat()
        guard lstat(url.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        #if canImport(Darwin)
        let time = status.st_mtimespec
        #else
        let time = status.st_mtim
        #endif
        return Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9)
    }
}
