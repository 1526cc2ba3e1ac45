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
    /// Runs blocking file-system work off Swift's cooperative pool, which has one thread per
    /// core: an fsync can take seconds on a busy disk, and two of them would stall every task
    /// of the process.
    ///
    /// `queue` is the caller's own serial queue. Dispatch gives such a queue a thread even
    /// when every core is busy, whereas the global queues share one thread per core: with
    /// the process's other work on them, a provider's answers once waited past a call's
    /// deadline.
    static func offPool<T: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: work()) }
        }
    }

    /// A serial queue for one provider's or transport's file work.
    static func queue(_ owner: String) -> DispatchQueue {
        DispatchQueue(label: "switchboard.file-drop." + owner)
    }

    /// Writes `data` to `url` atomically and without replacing anything: readers see no file
    /// or the whole file, and if `url` already exists the write fails with `EEXIST` and the
    /// existing file stays (a request id answered twice keeps its first answer). With
    /// `durable`, the data and the new name survive a power cut too (fsync of file and folder).
    static func writeAtomically(_ data: Data, to url: URL, durable: Bool) throws {
        try writeAtomically(data, to: Location(url), durable: durable)
    }

    /// ``writeAtomically(_:to:durable:)`` to a location, which may be a name in an open folder.
    static func writeAtomically(_ data: Data, to target: Location, durable: Bool) throws {
        // The name's last 100 bytes at most (its state suffix stays in it, for recovery), so a
        // long document name cannot make its temporary name too long for the file system.
        var tail = Substring(target.lastComponent)
        while tail.utf8.count > 100 { tail = tail.dropFirst() }
        let temporary = target.sibling("." + tail + "." + String(UInt32.random(in: .min ... .max), radix: 16) + ".tmp")
        let descriptor = openat(temporary.folder, temporary.name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { unlinkat(temporary.folder, temporary.name, 0) }
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
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        close(descriptor)
        if let failure { throw POSIXError(POSIXErrorCode(rawValue: failure) ?? .EIO) }
        // A hard link publishes the whole file under its name, and fails if the name is taken.
        guard hardLink(temporary, to: target) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        if durable { target.syncFolder() }
    }

    /// Renames `from` to `to` unless `to` exists; `false` when it did not move, for whatever
    /// reason (``tryMove(_:to:durable:)`` says which).
    static func move(_ from: URL, to: URL, durable: Bool) -> Bool {
        tryMove(Location(from), to: Location(to), durable: durable) == .moved
    }

    /// ``move(_:to:durable:)`` between locations.
    static func move(_ from: Location, to: Location, durable: Bool) -> Bool {
        tryMove(from, to: to, durable: durable) == .moved
    }

    /// How a move went.
    enum MoveOutcome: Sendable, Equatable {
        case moved
        /// `from` is gone: another process moved or removed it first (a race lost).
        case sourceGone
        /// `to` exists already.
        case targetTaken
        /// The system refused for another reason: the `errno`.
        case failed(Int32)
    }

    /// Renames `from` to `to` unless `to` exists, and says why not. The link-then-unlink keeps
    /// it a claim only one process wins. Only ``MoveOutcome/sourceGone`` is a race lost; the
    /// others leave `from` where it is for good, so a caller should say so.
    static func tryMove(_ from: URL, to: URL, durable: Bool) -> MoveOutcome {
        tryMove(Location(from), to: Location(to), durable: durable)
    }

    /// ``tryMove(_:to:durable:)`` between locations, which may be names in open folders.
    static func tryMove(_ from: Location, to: Location, durable: Bool) -> MoveOutcome {
        guard hardLink(from, to: to) else {
            let reason = errno
            if reason == EEXIST { return .targetTaken }
            // Also the answer when `to`'s folder is missing: only a missing `from` is a race lost.
            if reason == ENOENT { return entryExists(from) ? .failed(reason) : .sourceGone }
            // A link refused where a rename is not: another user's file under Linux's
            // `fs.protected_hardlinks`, a file system without hard links.
            if [EPERM, EXDEV, EMLINK, ENOTSUP, EOPNOTSUPP].contains(reason) {
                return renameUnlessTaken(from, to: to, durable: durable, linkFailure: reason)
            }
            return .failed(reason)
        }
        guard remove(from) else {
            let reason = errno
            // Another process removed `from` first: it claimed it, so this one did not.
            _ = remove(to)
            return reason == ENOENT ? .sourceGone : .failed(reason)
        }
        if durable { to.syncFolder() }
        return .moved
    }

    /// Moves `from` with `rename` where a hard link was refused (`linkFailure`), once `to` is
    /// seen free: `rename` replaces what `to` names, so a `to` made between the check and the
    /// rename (microseconds) would be lost; only a writer of that very name could do that.
    /// The rename still has one winner, as `from` moves once. A folder is never moved: it
    /// would take its contents along, and could replace an empty folder.
    static func renameUnlessTaken(_ from: Location, to: Location, durable: Bool, linkFailure: Int32) -> MoveOutcome {
        var status = stat()
        guard fstatat(from.folder, from.name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return errno == ENOENT ? .sourceGone : .failed(errno) }
        guard status.st_mode & S_IFMT != S_IFDIR else { return .failed(linkFailure) }
        if fstatat(to.folder, to.name, &status, AT_SYMLINK_NOFOLLOW) == 0 { return .targetTaken }
        guard errno == ENOENT else { return .failed(errno) }
        guard renameat(from.folder, from.name, to.folder, to.name) == 0 else { return errno == ENOENT ? .sourceGone : .failed(errno) }
        if durable { to.syncFolder() }
        return .moved
    }

    /// Whether `location` names an entry of any type, a dangling link included.
    static func entryExists(_ location: Location) -> Bool {
        var status = stat()
        return fstatat(location.folder, location.name, &status, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// Removes the entry `location` names (not a folder); whether it did (`errno` says why not).
    @discardableResult
    static func remove(_ location: Location) -> Bool {
        unlinkat(location.folder, location.name, 0) == 0
    }

    /// A second name for `from` (the entry itself: a symbolic link is linked as the link,
    /// never followed, where plain `link` follows it on Darwin and a swapped-in link would
    /// turn a claim into a hard link to any file of the provider's).
    static func hardLink(_ from: Location, to: Location) -> Bool {
        linkat(from.folder, from.name, to.folder, to.name, 0) == 0
    }

    static func syncFolder(_ folder: URL) {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    /// A document's bytes, refusing files larger than `limit` before reading them, and
    /// anything but a regular file (a FIFO would block the reader, a link could point anywhere).
    static func readDocument(_ url: URL, limit: Int) -> Data? {
        if case let .read(data) = readRegularFile(url, limit: limit, followingLinks: false) { return data }
        return nil
    }

    /// How reading a file went.
    enum FileRead: Sendable {
        case read(Data), tooLarge, notRegular
        /// The system refused (the reason), or the file ended early.
        case unreadable(String)
    }

    /// Reads a regular file of at most `limit` bytes, checked on the open file before reading
    /// (so a file swapped for a device or a FIFO after a check cannot slip through).
    static func readRegularFile(_ url: URL, limit: Int, followingLinks: Bool) -> FileRead {
        readRegularFile(Location(url), limit: limit, followingLinks: followingLinks)
    }

    /// ``readRegularFile(_:limit:followingLinks:)`` at a location, which may be a name in an open folder.
    static func readRegularFile(_ location: Location, limit: Int, followingLinks: Bool) -> FileRead {
        let descriptor = openat(location.folder, location.name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW))
        guard descriptor >= 0 else { return errno == ELOOP ? .notRegular : .unreadable(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .unreadable(String(cString: strerror(errno))) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .notRegular }
        guard Int(status.st_size) <= limit else { return .tooLarge }
        var data = Data(count: Int(status.st_size))
        var total = 0
        let complete = data.withUnsafeMutableBytes { buffer -> Bool in
            while total < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + total, buffer.count - total)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                total += count
            }
            return true
        }
        return complete ? .read(data) : .unreadable("the file ended before its size")
    }

    static func exists(_ url: URL) -> Bool { access(url.path, F_OK) == 0 }

    /// Whether `location` names a file (a link counts if what it points to exists, as for a path).
    static func exists(_ location: Location) -> Bool { faccessat(location.folder, location.name, F_OK, 0) == 0 }

    /// Names of the entries of `folder` (of any type), sorted; none if it cannot be listed.
    static func names(in folder: URL) -> [String] {
        (try? listing(of: folder)) ?? []
    }

    /// Names of the entries of `folder`, sorted; throws why it cannot be listed.
    static func listing(of folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    /// Whether `url` is a folder itself, not a link to one: a consumer must not make the
    /// provider serve (and write answers into) another endpoint's or any other folder.
    static func isFolder(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Whether each of `components`, walked down from `root`, is a folder itself and not a
    /// link to one. Whoever gets to create a folder first (a consumer creates its endpoint's
    /// folder on first use) could otherwise point the provider at another endpoint's folder,
    /// or anywhere, to be served and swept there. `root` itself is the app's choice and may
    /// be a link (`/tmp` is one on Darwin).
    static func isFolderChain(from root: URL, _ components: [String]) -> Bool {
        var url = root
        for component in components {
            url.appendPathComponent(component)
            guard isFolder(url) else { return false }
        }
        return true
    }

    /// When `folder` last had an entry added, removed or renamed; `nil` if it cannot be read.
    static func modificationTime(_ folder: URL) -> timespec? {
        var status = stat()
        guard lstat(folder.path, &status) == 0 else { return nil }
        #if canImport(Darwin)
        return status.st_mtimespec
        #else
        return status.st_mtim
        #endif
    }

    /// Whether `url` is a regular file itself (not a folder, link, FIFO or device).
    static func isRegularFile(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }

    /// Where a file is: a name in a folder opened by descriptor (``OpenFolder``), or a whole
    /// path. Names in an open folder stay in that folder whatever happens to the path that
    /// led to it: a folder swapped for a symbolic link after it was opened is not followed.
    struct Location {
        /// The open folder the name is in; `nil` when ``name`` is a path.
        let owner: OpenFolder?
        /// The name in ``owner``, or a path.
        let name: String
        /// The name's last component.
        let lastComponent: String
        /// For a path: the folder holding it.
        private let parent: URL?

        /// The file at `url`, by its path.
        init(_ url: URL) {
            owner = nil
            name = url.path
            lastComponent = url.lastPathComponent
            parent = url.deletingLastPathComponent()
        }

        /// The file `name` (one component) in `folder`.
        init(_ name: String, in folder: OpenFolder) {
            owner = folder
            self.name = name
            lastComponent = name
            parent = nil
        }

        /// The descriptor the name is relative to (`AT_FDCWD` for a path). Valid while this
        /// location is: it holds its folder open.
        var folder: Int32 { owner?.descriptor ?? AT_FDCWD }

        /// The file `name` in the same folder.
        func sibling(_ name: String) -> Location {
            if let owner { return Location(name, in: owner) }
            return Location((parent ?? URL(fileURLWithPath: ".")).appendingPathComponent(name))
        }

        /// Flushes the folder holding it (so its new names survive a power cut).
        func syncFolder() {
            if let owner { fsync(owner.descriptor) } else if let parent { FileDropFiles.syncFolder(parent) }
        }
    }

    /// A folder opened once and then worked in by its descriptor (`openat`, `fstatat`,
    /// `unlinkat`, `linkat`), never by its path again: a folder swapped for a symbolic link
    /// (by a consumer that owns it) between a check and a use cannot lead the provider into
    /// another folder. Closed when the last reference goes.
    final class OpenFolder: Sendable {
        let descriptor: Int32
        /// Its path when opened, for reports only.
        let url: URL

        private init(descriptor: Int32, url: URL) {
            self.descriptor = descriptor
            self.url = url
        }

        deinit { close(descriptor) }

        /// `root` (the app's choice, which may be a link), then each of `components` in turn
        /// down from it, each a folder itself and not a link.
        init(root: URL, _ components: [String]) throws(POSIXError) {
            var descriptor = open(root.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            var url = root
            for component in components {
                let next = Self.openSubfolder(component, of: descriptor)
                let reason = errno
                close(descriptor)
                guard next >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: reason) ?? .EIO) }
                descriptor = next
                url.appendPathComponent(component)
            }
            self.descriptor = descriptor
            self.url = url
        }

        /// The folder at `url`, which must be a folder itself, not a link (the folders on the
        /// way to it are followed).
        init(_ url: URL) throws(POSIXError) {
            let descriptor = open(url.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            self.descriptor = descriptor
            self.url = url
        }

        /// Opens the subfolder `name` (one component) of the folder `parent` is open on, if it is
        /// a folder itself and not a link; -1 and `errno` if not.
        private static func openSubfolder(_ name: String, of parent: Int32) -> Int32 {
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/") else {
                errno = EINVAL
                return -1
            }
            return openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }

        /// Its subfolder `name`, which must be a folder itself, not a link; made first if
        /// `creating` and missing (with the process's umask, as `FileManager` makes folders,
        /// so a group sharing the catalogue can write in it).
        func subfolder(_ name: String, creating: Bool = false) throws(POSIXError) -> OpenFolder {
            if creating, !name.isEmpty, name != ".", name != "..", !name.contains("/"), mkdirat(descriptor, name, 0o777) != 0, errno != EEXIST {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            let opened = Self.openSubfolder(name, of: descriptor)
            guard opened >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            return OpenFolder(descriptor: opened, url: url.appendingPathComponent(name))
        }

        /// The file `name` in it.
        func entry(_ name: String) -> Location { Location(name, in: self) }

        /// The names of its entries (of any type), sorted; names that are not UTF-8 are left out.
        func names() throws(POSIXError) -> [String] {
            // A listing of its own: the copy is the stream's, which closes it.
            let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
            guard copy >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            guard let stream = fdopendir(copy) else {
                let reason = errno
                close(copy)
                throw POSIXError(POSIXErrorCode(rawValue: reason) ?? .EIO)
            }
            defer { closedir(stream) }
            // The copy shares its offset with the descriptor: start from the first entry.
            rewinddir(stream)
            var names: [String] = []
            while true {
                errno = 0
                guard let entry = readdir(stream) else {
                    if errno != 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                    break
                }
                let name = withUnsafePointer(to: entry.pointee.d_name) { tuple -> String? in
                    tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) { String(validatingCString: $0) }
                }
                if let name, name != ".", name != ".." { names.append(name) }
            }
            return names.sorted()
        }

        /// The status of its entry `name` itself (a link is not followed); `nil` if there is none.
        func status(of name: String) -> stat? {
            var status = stat()
            return fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 ? status : nil
        }

        /// Whether its entry `name` is a folder itself, not a link to one.
        func isFolder(_ name: String) -> Bool {
            status(of: name).map { $0.st_mode & S_IFMT == S_IFDIR } ?? false
        }

        /// Whether it has a file `name` (a link counts if what it points to exists).
        func exists(_ name: String) -> Bool { FileDropFiles.exists(entry(name)) }

        /// Removes its entry `name` (not a folder); whether it did.
        @discardableResult
        func remove(_ name: String) -> Bool { FileDropFiles.remove(entry(name)) }
    }
}
