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
/// A request is finished when it has an answer or was withdrawn; one with a request or claim
/// document (in the folder or its archive) is never touched. Its documents, wherever they
/// are, go together once the last change to any of them is older than the cutoff. A change
/// is a file's status change time, which writing, linking, renaming and archiving all set,
/// so a document moved moments ago counts as new, whenever it was written.
enum FileDropRetention {
    /// Removes what in `folder` (an endpoint's or consumer's folder) and its archive was
    /// finished before `cutoff`; returns how many files it removed.
    static func prune(_ folder: URL, before cutoff: Date) -> Int {
        struct Request {
            var files: [URL] = []
            var lastChange = Date.distantPast
            var finished = false
            var inProgress = false
        }
        var removed = 0
        var requests: [String: Request] = [:]
        // An archive that is a link (to another folder, or anywhere) is not swept.
        let archive = folder.appendingPathComponent(FileDropDocument.archiveFolder)
        for place in [folder] + (FileDropFiles.isFolder(archive) ? [archive] : []) {
            for name in FileDropFiles.names(in: place) {
                let url = place.appendingPathComponent(name)
                guard let changed = lastChange(url) else { continue }
                if name.hasPrefix(".") {
                    // A document a writer died writing (a provider's own are cleaned on start).
                    if name.hasSuffix(".tmp"), changed < cutoff, unlink(url.path) == 0 { removed += 1 }
                    continue
                }
                guard let (id, suffix) = split(name) else { continue }
                var request = requests[id] ?? Request()
                request.files.append(url)
                request.lastChange = max(request.lastChange, changed)
                switch suffix {
                case FileDropDocument.requestSuffix, FileDropDocument.claimedSuffix: request.inProgress = true
                default: request.finished = true
                }
                requests[id] = request
            }
        }
        for request in requests.values where request.finished && !request.inProgress && request.lastChange < cutoff {
            // Responses go last: while one stays, the id counts as answered.
            let isResponse = { (url: URL) in url.lastPathComponent.hasSuffix(FileDropDocument.responseSuffix) }
            for url in request.files.filter({ !isResponse($0) }) + request.files.filter(isResponse) where unlink(url.path) == 0 {
                removed += 1
            }
        }
        return removed
    }

    /// A document name's request id and state suffix.
    static func split(_ name: String) -> (String, String)? {
        for suffix in FileDropDocument.stateSuffixes where name.hasSuffix(suffix) {
            return (String(name.dropLast(suffix.count)), suffix)
        }
        return nil
    }

    /// When a regular file (not a link or folder) was last written, linked or renamed.
    static func lastChange(_ url: URL) -> Date? {
        var status = stat()
        guard lstat(url.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        #if canImport(Darwin)
        let modified = status.st_mtimespec, changed = status.st_ctimespec
        #else
        let modified = status.st_mtim, changed = status.st_ctim
        #endif
        func date(_ time: timespec) -> Date { Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9) }
        return max(date(modified), date(changed))
    }
}
