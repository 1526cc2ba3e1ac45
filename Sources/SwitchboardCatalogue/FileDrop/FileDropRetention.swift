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
    /// finished before `cutoff`; returns how many files it removed. Works by descriptor: the
    /// names are listed, checked and removed in the folder that was opened, so a folder (or
    /// an archive) swapped for a symbolic link meanwhile cannot make it remove files elsewhere.
    static func prune(_ folder: FileDropFiles.OpenFolder, before cutoff: Date) -> Int {
        struct Request {
            var files: [FileDropFiles.Location] = []
            var lastChange = Date.distantPast
            var finished = false
            var inProgress = false
        }
        var removed = 0
        var requests: [String: Request] = [:]
        // An archive that is a link (to another folder, or anywhere) is not swept.
        let archive = try? folder.subfolder(FileDropDocument.archiveFolder)
        for place in [folder] + (archive.map { [$0] } ?? []) {
            for name in (try? place.names()) ?? [] {
                guard let changed = place.status(of: name).flatMap(lastChange) else { continue }
                if name.hasPrefix(".") {
                    // A document a writer died writing (a provider's own are cleaned on start).
                    if name.hasSuffix(".tmp"), changed < cutoff, place.remove(name) { removed += 1 }
                    continue
                }
                guard let (id, suffix) = split(name) else { continue }
                var request = requests[id] ?? Request()
                request.files.append(place.entry(name))
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
            let isResponse = { (file: FileDropFiles.Location) in file.lastComponent.hasSuffix(FileDropDocument.responseSuffix) }
            for file in request.files.filter({ !isResponse($0) }) + request.files.filter(isResponse) where FileDropFiles.remove(file) {
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

    /// When a regular file (not a link or folder) was last written, linked or renamed, by
    /// its status (taken without following a link).
    static func lastChange(_ status: stat) -> Date? {
        guard status.st_mode & S_IFMT == S_IFREG else { return nil }
        #if canImport(Darwin)
        let modified = status.st_mtimespec, changed = status.st_ctimespec
        #else
        let modified = status.st_mtim, changed = status.st_ctim
        #endif
        func date(_ time: timespec) -> Date { Date(timeIntervalSince1970: TimeInterval(time.tv_sec) + TimeInterval(time.tv_nsec) / 1e9) }
        return max(date(modified), date(changed))
    }
}
