import Foundation
import SwitchboardRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Serves request documents dropped into a catalogue's folders with a router of generated
/// handlers, and writes each response document next to its request.
///
/// Each request is served at most once and answered exactly once, whatever moment the
/// provider is killed at: a request is claimed by renaming it (one process wins), answered
/// by an atomic write, then marked served. On start, a request found claimed but unanswered
/// was being served when the provider stopped; it is answered as interrupted, never served
/// again.
public final class FileDropProvider: Sendable {
    /// The catalogue's folder.
    public let directory: URL
    /// The provider's own catalogue: which endpoints it serves, in which versions.
    public let catalogue: ServiceCatalogue
    /// The generated handlers' routes that serve the documents.
    public let router: RPCRouter
    /// Timing and limits.
    public let options: FileDropOptions
    private let task = Locked<Task<Void, Never>?>(nil)
    /// Requests being served, by folder and id; each slot frees as its answer is written.
    private let inFlight = Locked<[String: Task<Bool, Never>]>([:])
    /// Requests whose claim failed (a name this process may not move): skipped while their
    /// file stays, so they cannot keep the loop from sleeping (and are said once). Their ids by
    /// their folder's path. A folder's are forgotten only as a scan lists it (those whose file
    /// is gone) or finds it gone: one outside the scan's window of consumer folders keeps its
    /// own, or each time round the window would try and say them again.
    let unclaimable = Locked<[String: Set<String>]>([:])
    /// Requests whose folder could not be opened for the claim (a passing failure: no
    /// descriptor free, no memory, a folder replaced meanwhile), by key: tried again from the
    /// instant given (the next poll), not before, so they cannot keep the loop from sleeping.
    private let retryAt = Locked<[String: ContinuousClock.Instant]>([:])
    /// Where each endpoint folder's next window of consumer folders starts, by the endpoint
    /// folder's path: the last name the previous window took, when it did not take them all.
    private let rotation = Locked<[String: String]>([:])
    /// Wakes the loop early when a slot frees.
    private let slotFreed = Locked<CheckedContinuation<Void, Never>?>(nil)
    private let files = FileDropFiles.queue("provider")
    /// The retention sweep's own queue and task.
    private let sweepFiles = FileDropFiles.queue("provider-retention")
    private let sweeper = Locked<Task<Void, Never>?>(nil)
    /// Requests one scan found, oldest first, worked through before the next scan.
    private let backlog = Locked(Backlog())
    /// Each folder's last listing, by path, reused while the folder is unchanged; only the
    /// folders the last scan found are kept.
    let listings = Locked<[String: Listing]>([:])
    /// Problems said already, by path: one that persists (a folder that cannot be listed, more
    /// consumer folders than the limit) is said once, not at every look; again if it changes,
    /// or once it cleared and came back. Only the folders the last scan found are kept.
    private let reported = Locked<[String: String]>([:])
    /// The wall clock the sweep compares documents' ages with (a test moves it ahead).
    let clock: @Sendable () -> Date

    /// A provider of `catalogue`'s services from the folder `directory`, served by `router`.
    public convenience init(directory: URL, catalogue: ServiceCatalogue, router: RPCRouter, options: FileDropOptions = FileDropOptions()) {
        self.init(directory: directory, catalogue: catalogue, router: router, options: options, clock: { Date() })
    }

    init(directory: URL, catalogue: ServiceCatalogue, router: RPCRouter, options: FileDropOptions, clock: @escaping @Sendable () -> Date) {
        self.directory = directory
        self.catalogue = catalogue
        self.router = router
        self.options = options
        self.clock = clock
    }

    /// Takes the catalogue folder (one provider serves a folder at a time), then, in the
    /// background, recovers what a previous run left and serves until ``stop()``. Throws if
    /// another provider holds the folder, or its lock file is not this user's regular file.
    public func start() throws(CatalogueError) {
        let descriptor = try Self.openLock(directory.appendingPathComponent(".provider.lock"))
        // Held for the process's life in the folder; the kernel releases it when the process dies.
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw CatalogueError(file: ".provider.lock", "another provider is serving \(directory.path)")
        }
        if options.retention != nil {
            // On its own queue: a week of documents to look through must not hold up serving.
            let sweeping = Task.detached { [self] in
                while !Task.isCancelled {
                    await removeExpired(now: clock())
                    try? await Task.sleep(for: max(options.retentionSweepInterval, .seconds(1)))
                }
            }
            sweeper.withLock { $0 = sweeping }
        }
        let started = Task { [self] in
            // What a previous run left is answered before any request is taken, off the
            // caller's thread: any number of claims (planted ones too) must not hold up start().
            await FileDropFiles.offPool(on: files) { [self] in recover() }
            // Requests start as slots free, whatever the others take: one slow handler holds
            // its own slot, not the intake.
            while !Task.isCancelled {
                if await startPending() == 0 { await waitForSlot(atMost: options.effectivePollInterval) }
            }
            // Stopping takes no new request; those in hand are answered.
            for running in inFlight.withLock({ Array($0.values) }) { _ = await running.value }
            close(descriptor)
        }
        task.withLock { $0 = started }
    }

    /// Opens (creating it if need be) the lock file `url`: never through a symbolic link (a
    /// planted `.provider.lock -> /any/path` would make the provider create and lock that
    /// path), never as a terminal or FIFO, and only a regular file of this user's with one
    /// name, readable and writable by this user alone (anyone who can open it can hold its
    /// lock and keep every provider out; a lock an earlier version left readable is made private).
    static func openLock(_ url: URL) throws(CatalogueError) -> Int32 {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else {
            let reason = errno
            throw CatalogueError(file: ".provider.lock", reason == ELOOP
                ? "is a symbolic link; remove it"
                : "cannot be opened: \(String(cString: strerror(reason)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid(), status.st_nlink == 1 else {
            close(descriptor)
            throw CatalogueError(file: ".provider.lock", "is not a regular file of this user's (uid \(geteuid())) with a single name; remove it")
        }
        if status.st_mode & 0o077 != 0, fchmod(descriptor, 0o600) != 0 {
            let reason = errno
            close(descriptor)
            throw CatalogueError(file: ".provider.lock", "cannot be made private to this user: \(String(cString: strerror(reason)))")
        }
        return descriptor
    }

    /// Stops taking requests, answers those in hand (waiting at most
    /// ``FileDropOptions/stopTimeout`` for them), and releases the folder. If the timeout
    /// passes first, the folder stays held until those handlers finish: a provider started
    /// meanwhile finds it taken.
    public func stop() async {
        if let sweeping = sweeper.withLock({ current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }) {
            sweeping.cancel()
            await sweeping.value
        }
        guard let running = task.withLock({ current -> Task<Void, Never>? in
            defer { current = nil }
            return current
        }) else { return }
        running.cancel()
        _ = await running.value(within: options.stopTimeout)
    }

    struct Backlog: Sendable {
        var entries: [(Folder, String)] = []
        var next = 0
        var scannedAt: ContinuousClock.Instant?
    }

    /// What listing a folder found: the ids of its requests and its subfolders.
    struct Listing: Sendable {
        var modified: (seconds: Int, nanoseconds: Int)
        var listedAt: ContinuousClock.Instant
        /// The wall-clock time of the listing, to compare with the folder's modification time.
        var listedAtWall: Date
        var requests: [String]
        var subfolders: [String]
    }

    struct Folder: Sendable {
        let url: URL
        let service: ServiceCatalogue.Service
        let endpoint: ServiceCatalogue.Endpoint
        /// The catalogue's folder, and the folders from it down to this one.
        let root: URL
        let components: [String]
        /// The consumer's subfolder this is, or `nil` for the endpoint's own folder.
        let consumer: String?

        /// The folder as it is now, opened by descriptor from the catalogue's folder down, each
        /// folder on the way a folder itself and not a link: one swapped for a link since a
        /// scan found it is refused, and what is done in it stays in it.
        func opened() throws(POSIXError) -> FileDropFiles.OpenFolder {
            try FileDropFiles.OpenFolder(root: root, components)
        }
    }

    /// Every folder requests may arrive in: each endpoint's, and its consumers' subfolders. A
    /// scan (`every` false) takes at most ``FileDropOptions/maximumConsumerFolders`` of them an
    /// endpoint, in turn: each new listing of the endpoint's folder takes the next ones by name
    /// after those the previous took (starting over past the last), and those whose last
    /// listing found requests besides (at most as many again). With `every`, all of them
    /// (recovery and the retention sweep, which run seldom). A folder on the way that is a link
    /// (or not a folder) is skipped: it could lead the provider into another endpoint's folder,
    /// or anywhere.
    func folders(every: Bool = false) -> [Folder] {
        endpointFolders(every: every).flatMap { [$0.base] + $0.consumers }
    }

    /// Each endpoint's folder, its listing (none with `every`) and the consumer folders taken
    /// from it. A scan lists each endpoint folder once, here: listing it again in the same scan
    /// would move the consumer window a second time, and the window between would never be served.
    func endpointFolders(every: Bool = false) -> [(base: Folder, listing: Listing?, consumers: [Folder])] {
        var found: [(base: Folder, listing: Listing?, consumers: [Folder])] = []
        for service in catalogue.services {
            for endpoint in service.endpoints {
                let components = (service.folder + "/" + endpoint.folder).split(separator: "/").map(String.init)
                guard FileDropFiles.isFolderChain(from: directory, components) else { continue }
                let base = Folder(url: directory.appendingPathComponent(service.folder).appendingPathComponent(endpoint.folder),
                                  service: service, endpoint: endpoint, root: directory, components: components, consumer: nil)
                let listed = every ? nil : listing(of: base)
                let consumers = (listed?.subfolders ?? allConsumerFolders(of: base)).map { name in
                    Folder(url: base.url.appendingPathComponent(name), service: service, endpoint: endpoint,
                           root: directory, components: components + [name], consumer: name)
                }
                found.append((base, listed, consumers))
            }
        }
        return found
    }

    /// The names of all of `base`'s consumer folders (each a folder itself, not a link), or none
    /// if ``FileDropOptions/maximumConsumerFolders`` is 0 or less; a folder that cannot be
    /// listed has none (the scans say so).
    func allConsumerFolders(of base: Folder) -> [String] {
        guard options.maximumConsumerFolders > 0, let opened = try? base.opened(), let names = try? opened.names() else { return [] }
        return names.filter { !$0.hasPrefix(".") && !$0.hasSuffix(".json") && opened.isFolder($0) }
    }

    /// Whether `sorted` (in ascending order) holds `name`.
    static func contains(_ name: String, sorted: [String]) -> Bool {
        let index = firstIndex(after: name, sorted: sorted, orEqual: true)
        return index < sorted.count && sorted[index] == name
    }

    /// The index of the first of `sorted` (in ascending order) past `name` (or, `orEqual`, not
    /// before it); `sorted.count` if none is.
    static func firstIndex(after name: String, sorted: [String], orEqual: Bool = false) -> Int {
        var low = 0, high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            let before = orEqual ? sorted[middle] < name : sorted[middle] <= name
            if before { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The consumer folders of endpoint folder `folder` (open as `opened`) a scan takes, from
    /// the names `candidates` (sorted) that may be ones: the next `limit` after those its
    /// previous listing took, wrapping past the last, and those outside the window whose last
    /// listing found requests (at most `limit` more); and whether the window left some out.
    func window(of folder: Folder, _ candidates: [String], in opened: FileDropFiles.OpenFolder, limit: Int) -> (names: [String], more: Bool) {
        let path = folder.url.path
        let start = rotation.withLock { $0[path] }.map { Self.firstIndex(after: $0, sorted: candidates) } ?? 0
        var taken: [String] = [], more = false
        for step in 0..<candidates.count {
            let name = candidates[(start + step) % candidates.count]
            guard opened.isFolder(name) else { continue }
            // Past the limit, one more folder is enough to know there are more.
            if taken.count == limit {
                more = true
                break
            }
            taken.append(name)
        }
        rotation.withLock { $0[path] = more ? taken.last : nil }
        guard more else { return (taken.sorted(), false) }
        // Folders left out of this window whose last listing (from the previous scan) found
        // requests: kept, so a request found is not left until the window comes round again.
        let prefix = path + "/"
        let inWindow = Set(taken)
        let pending: [String] = listings.withLock { cached in
            cached.compactMap { key, listing -> String? in
                guard !listing.requests.isEmpty, key.hasPrefix(prefix) else { return nil }
                let name = String(key.dropFirst(prefix.count))
                return name.contains("/") || inWindow.contains(name) ? nil : name
            }
        }
        let kept = pending.sorted().filter { Self.contains($0, sorted: candidates) && opened.isFolder($0) }.prefix(limit)
        return ((taken + kept).sorted(), true)
    }

    /// `folder`'s requests and, for an endpoint's own folder, its consumers' subfolders: listed
    /// again only when its modification time changed or the listing is older than
    /// ``FileDropOptions/fullScanInterval`` (which also covers file systems that keep times to
    /// the second).
    func listing(of folder: Folder) -> Listing {
        let now = ContinuousClock.now
        let time = FileDropFiles.modificationTime(folder.url)
        let modified = (seconds: Int(time?.tv_sec ?? -1), nanoseconds: Int(time?.tv_nsec ?? -1))
        // A listing taken within a second of the folder's last change is not trusted: file
        // systems stamp folders from a coarse clock (a tick of milliseconds, or a whole
        // second), so a change right after the listing can leave the time as it was.
        if let known = listings.withLock({ $0[folder.url.path] }), known.modified == modified, now - known.listedAt < options.fullScanInterval,
           known.listedAtWall.timeIntervalSince1970 - (Double(modified.seconds) + Double(modified.nanoseconds) / 1e9) > 1 {
            return known
        }
        // Consumers' subfolders are looked for only in an endpoint's own folder, and only up to
        // the limit a scan: each costs a `stat` at every poll.
        let limit = folder.consumer == nil ? max(0, options.maximumConsumerFolders) : 0
        var requests: [String] = [], subfolders: [String] = [], candidates: [String] = []
        var names: [String] = []
        var opened: FileDropFiles.OpenFolder?
        do throws(POSIXError) {
            let current = try folder.opened()
            names = try current.names()
            opened = current
        } catch {
            // A folder not made yet, or gone, is normal (consumers create theirs on first use,
            // and may remove them); one that became a link is skipped as at the scan.
            if ![ENOENT, ENOTDIR, ELOOP].contains(error.code.rawValue) {
                reportOnce(folder.url, "cannot be listed: \(String(cString: strerror(error.code.rawValue)))")
            }
        }
        var more = false
        for name in names where !name.hasPrefix(".") {
            if name.hasSuffix(FileDropDocument.requestSuffix) {
                let id = name.dropLast(FileDropDocument.requestSuffix.count)
                // Some name of its documents would be too long for a file system (255 bytes),
                // its withdrawal's or its answer's: not claimed, so it cannot be served without
                // an answer or after its consumer gave up.
                guard id.utf8.count <= FileDropDocument.maximumIDBytes else { continue }
                requests.append(String(id))
            } else if limit > 0, !name.hasSuffix(".json") {
                candidates.append(name)
            }
        }
        if let opened, limit > 0 {
            let chosen = window(of: folder, candidates, in: opened, limit: limit)
            subfolders = chosen.names
            more = chosen.more
            // What was said of a consumer folder, and which of its requests are unclaimable, is
            // kept while the window is elsewhere (so it is not tried and said again each time
            // round), and dropped once the folder is gone: no more is kept than the folders here.
            let prefix = folder.url.path + "/"
            let stays: (String) -> Bool = { [candidates] key in
                guard key.hasPrefix(prefix) else { return true }
                let name = String(key.dropFirst(prefix.count))
                return name.contains("/") || Self.contains(name, sorted: candidates)
            }
            reported.withLock { said in said = said.filter { key, _ in stays(key) } }
            unclaimable.withLock { stuck in stuck = stuck.filter { path, _ in stays(path) } }
        }
        if opened != nil {
            if more {
                reportOnce(folder.url, "has more than \(limit) consumer folders: they are served \(limit) at a time, in turn by name (FileDropOptions.maximumConsumerFolders)")
            } else {
                reported.withLock { _ = $0.removeValue(forKey: folder.url.path) }
            }
        }
        let listing = Listing(modified: modified, listedAt: now, listedAtWall: Date(), requests: requests, subfolders: subfolders)
        listings.withLock { $0[folder.url.path] = listing }
        return listing
    }

    /// Answers requests a previous run claimed but did not answer, and finishes the marking
    /// of those it answered. Runs only while this provider holds the folder's lock, so no
    /// other provider is serving them. Works in each folder by descriptor, so a folder swapped
    /// for a link cannot lead it to remove or write files anywhere else.
    func recover() {
        for folder in folders(every: true) {
            guard let opened = try? folder.opened() else { continue }
            for name in (try? opened.names()) ?? [] {
                if name.hasPrefix("."), name.hasSuffix(".tmp"), name.contains(FileDropDocument.responseSuffix) {
                    // A response this provider was writing when it stopped; it is written again below.
                    opened.remove(name)
                    continue
                }
                guard name.hasSuffix(FileDropDocument.claimedSuffix) else { continue }
                let id = String(name.dropLast(FileDropDocument.claimedSuffix.count))
                // Never claimed by a provider (whose ids fit every state's name): planted, and
                // its answer's name would be too long to write, at every start.
                guard id.utf8.count <= FileDropDocument.maximumIDBytes else { continue }
                let response = id + FileDropDocument.responseSuffix
                // Not answered (neither here nor taken away by the consumer): answered as
                // interrupted. Either way only the marking is left.
                if !opened.exists(response), !Self.isArchived(response, in: opened) {
                    // The header too, for consumers of the previous document format; this
                    // version's consumers read only the document member, which no handler sets.
                    let interrupted = RPCResponse(status: 503, headers: [FileDropDocument.legacyInterruptedHeader: "true"], message: "Service Unavailable")
                    do {
                        try FileDropFiles.writeAtomically(try FileDropDocument.encode(interrupted, id: id, interrupted: true),
                                                          to: opened.entry(response), durable: options.durable)
                    } catch {
                        report(folder.url.appendingPathComponent(response), "the interrupted answer could not be written (tried again at the next start): \(error)")
                        continue
                    }
                }
                Self.markServed(id, in: opened, durable: options.durable)
            }
        }
    }

    /// Whether `name` is in `folder`'s archive, which must be a folder itself, not a link.
    static func isArchived(_ name: String, in folder: FileDropFiles.OpenFolder) -> Bool {
        (try? folder.subfolder(FileDropDocument.archiveFolder))?.exists(name) ?? false
    }

    /// Removes what in `folder` (as it is now, by descriptor) and its archive was finished
    /// before `cutoff`; returns how many files it removed.
    func prune(_ folder: Folder, before cutoff: Date) -> Int {
        guard let opened = try? folder.opened() else { return 0 }
        return FileDropRetention.prune(opened, before: cutoff)
    }

    /// Removes the documents of requests finished longer than ``FileDropOptions/retention``
    /// before `now` (a running provider does this every
    /// ``FileDropOptions/retentionSweepInterval``); returns how many files it removed.
    @discardableResult
    public func removeExpired(now: Date = Date()) async -> Int {
        guard let retention = options.retention.map({ max($0, FileDropOptions.minimumRetention) }) else { return 0 }
        let parts = retention.components
        let cutoff = now.addingTimeInterval(-(TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18))
        return await FileDropFiles.offPool(on: sweepFiles) { [self] in
            folders(every: true).reduce(0) { $0 + prune($1, before: cutoff) }
        }
    }

    /// Ends the loop's current wait, if it is waiting.
    private func wakeLoop() {
        slotFreed.withLock { waiting in
            defer { waiting = nil }
            return waiting
        }?.resume()
    }

    /// Sleeps `interval`, or less if a slot frees first.
    private func waitForSlot(atMost interval: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            slotFreed.withLock { $0 = continuation }
            Task {
                try? await Task.sleep(for: interval)
                wakeLoop()
            }
        }
    }

    /// Serves every request waiting now and returns once they are answered; how many it claimed.
    func servePending() async -> Int {
        var claimed = 0
        for running in await startRequests() where await running.value { claimed += 1 }
        return claimed
    }

    /// Starts the waiting requests, oldest first in each folder and the folders in turn, as far
    /// as free slots allow; returns how many.
    @discardableResult
    func startPending() async -> Int { await startRequests().count }

    /// Starts what `startPending` starts and returns each request's task (whether it claimed).
    /// Requests come from the backlog the last scan found, oldest first; the folders are
    /// scanned again once it is worked through or older than ``FileDropOptions/fullScanInterval``.
    private func startRequests() async -> [Task<Bool, Never>] {
        let now = ContinuousClock.now
        let reuse = backlog.withLock { $0.next < $0.entries.count && $0.scannedAt.map { now - $0 < options.fullScanInterval } == true }
        if !reuse {
            let perFolder: [(Folder, [String])] = await FileDropFiles.offPool(on: files) { [self] in
                let endpoints = endpointFolders()
                let scanned = endpoints.flatMap { [$0.base] + $0.consumers }
                // A folder gone (a consumer's removed) takes its listing and what was said of it along.
                let paths = Set(scanned.map(\.url.path))
                listings.withLock { cached in cached = cached.filter { paths.contains($0.key) } }
                // A consumer folder outside this scan's window keeps what was said of it while its
                // endpoint's folder is scanned (its listing drops it once the folder is gone).
                let endpointPaths = Set(endpoints.map(\.base.url.path))
                reported.withLock { said in
                    said = said.filter { key, _ in
                        paths.contains(key) || key.lastIndex(of: "/").map { slash in endpointPaths.contains(String(key[..<slash])) } == true
                    }
                }
                // The endpoint folder's listing is the one its consumers were taken from.
                return endpoints.flatMap { entry in
                    [(entry.base, (entry.listing?.requests ?? []).sorted())] + entry.consumers.map { ($0, listing(of: $0).requests.sorted()) }
                }
            }
            // Oldest first within a folder (ids start with their submission time), and the
            // folders in turn: ids are the consumers' to choose, so one that names its requests
            // "0000…" must not go ahead of every other consumer's.
            let found: [(Folder, String)] = Self.inTurn(perFolder.map { entry in entry.1.map { (entry.0, $0) } })
            let present = Set(found.map { $0.0.url.path + "/" + $0.1 })
            // What is unclaimable is forgotten only where this scan looked: in each folder it
            // listed, the ids whose file is gone. A consumer folder outside this scan's window
            // keeps its ids while its endpoint's folder is scanned (that folder's listing drops
            // them once the consumer folder is gone); any other folder's go.
            var listedIDs: [String: Set<String>] = [:]
            for (folder, ids) in perFolder { listedIDs[folder.url.path, default: []].formUnion(ids) }
            let endpointPaths = Set(perFolder.compactMap { $0.0.consumer == nil ? $0.0.url.path : nil })
            unclaimable.withLock { stuck in
                var kept: [String: Set<String>] = [:]
                for (path, ids) in stuck {
                    if let listed = listedIDs[path] {
                        let still = ids.intersection(listed)
                        if !still.isEmpty { kept[path] = still }
                    } else if let slash = path.lastIndex(of: "/"), endpointPaths.contains(String(path[..<slash])) {
                        kept[path] = ids
                    }
                }
                stuck = kept
            }
            retryAt.withLock { waiting in waiting = waiting.filter { present.contains($0.key) } }
            backlog.withLock { $0 = Backlog(entries: found, next: 0, scannedAt: now) }
        }
        enum Start { case skip, full, started(Task<Bool, Never>) }
        var started: [Task<Bool, Never>] = []
        while !Task.isCancelled { // stopping takes no new request
            guard let (folder, id) = backlog.withLock({ $0.next < $0.entries.count ? $0.entries[$0.next] : nil }) else { break }
            let key = folder.url.path + "/" + id
            let waiting = retryAt.withLock { $0[key] }.map { instant in ContinuousClock.now < instant } == true
            let stuck = unclaimable.withLock { $0[folder.url.path]?.contains(id) == true }
            let start: Start = waiting || stuck ? .skip : inFlight.withLock { running in
                if running[key] != nil { return .skip }
                guard running.count < max(1, options.maximumConcurrentRequests) else { return .full }
                // Served in a task of its own, so stopping does not cancel a handler midway.
                let task = Task.detached { [self] in
                    let outcome = await attempt(id, in: folder)
                    switch outcome {
                    case .claimed, .lost: retryAt.withLock { _ = $0.removeValue(forKey: key) }
                    case .unclaimable: unclaimable.withLock { _ = $0[folder.url.path, default: []].insert(id) }
                    case .retryLater:
                        let next = ContinuousClock.now + options.effectivePollInterval
                        retryAt.withLock { $0[key] = next }
                    }
                    inFlight.withLock { $0[key] = nil }
                    wakeLoop()
                    return outcome == .claimed
                }
                running[key] = task
                return .started(task)
            }
            if case .full = start { break }
            if case let .started(task) = start { started.append(task) }
            backlog.withLock { $0.next += 1 }
        }
        return started
    }

    /// The items of `queues` in turns: the first of each queue, then the second of each, and so
    /// on. Queues run out are dropped as they do, so the cost is that of the items and queues,
    /// not of the longest queue times their number.
    static func inTurn<Item>(_ queues: [[Item]]) -> [Item] {
        var result: [Item] = []
        result.reserveCapacity(queues.reduce(0) { $0 + $1.count })
        var remaining = queues.filter { !$0.isEmpty }
        var round = 0
        while !remaining.isEmpty {
            for queue in remaining { result.append(queue[round]) }
            round += 1
            remaining.removeAll { $0.count <= round }
        }
        return result
    }

    /// What came of an attempt to serve a request.
    enum Attempt: Sendable, Equatable {
        /// This provider claimed it (and answered it, or left it claimed for the next start).
        case claimed
        /// Gone before the claim: another process took it, or its consumer withdrew it.
        case lost
        /// Its folder could not be opened (no descriptor or memory free, a folder replaced
        /// meanwhile, a passing refusal): tried again at the next poll it is still found at.
        case retryLater
        /// Its claim was refused (its claimed name taken, a rename the system refused): not
        /// tried again while its file stays.
        case unclaimable
    }

    /// Claims, serves and answers one request; the file work runs off the cooperative pool.
    /// Returns whether this provider claimed it.
    @discardableResult
    func serve(_ id: String, in folder: Folder) async -> Bool {
        await attempt(id, in: folder) == .claimed
    }

    /// Claims, serves and answers one request, as ``serve(_:in:)``, and says what came of it.
    /// The folder is opened by descriptor as it is at the claim, and the claim, the answer and
    /// the marking are all made in it: a folder swapped for a link since the scan is not served,
    /// and one moved meanwhile keeps its answer.
    func attempt(_ id: String, in folder: Folder) async -> Attempt {
        let submitted = id + FileDropDocument.requestSuffix
        let claimed = id + FileDropDocument.claimedSuffix
        let served = id + FileDropDocument.servedSuffix
        let response = id + FileDropDocument.responseSuffix
        let durable = options.durable, limit = options.maximumDocumentBytes
        enum Claim: Sendable { case notClaimed(Attempt), duplicate, document(FileDropFiles.OpenFolder, FileDropFiles.FileRead) }
        let claim: Claim = await FileDropFiles.offPool(on: files) { [self] in
            let opened: FileDropFiles.OpenFolder
            do throws(POSIXError) {
                opened = try folder.opened()
            } catch {
                // Gone, or no longer a folder itself, maybe for a moment (removed and made
                // again); or a passing failure (no descriptor or memory free): the request is not
                // given up, it is tried again at the next poll that finds it. Said once.
                if ![ENOENT, ENOTDIR, ELOOP].contains(error.code.rawValue) {
                    reportOnce(folder.url, "cannot be opened: \(String(cString: strerror(error.code.rawValue)))")
                }
                return .notClaimed(.retryLater)
            }
            // The rename is the claim: if another provider won it, the file is gone.
            switch FileDropFiles.tryMove(opened.entry(submitted), to: opened.entry(claimed), durable: durable) {
            case .moved: break
            case .sourceGone: return .notClaimed(.lost)
            case .targetTaken:
                // No race lost: it stays unclaimable while the file stays, so it is said once.
                report(folder.url.appendingPathComponent(submitted), "cannot be claimed: \(claimed) exists already")
                return .notClaimed(.unclaimable)
            case let .failed(reason):
                report(folder.url.appendingPathComponent(submitted), "cannot be claimed as \(claimed): \(String(cString: strerror(reason)))")
                return .notClaimed(.unclaimable)
            }
            // A request submitted again under an id already answered is not served twice.
            if opened.exists(response) || Self.isArchived(response, in: opened) {
                Self.retire(opened.entry(claimed), as: opened.entry(served), durable: durable)
                return .duplicate
            }
            return .document(opened, FileDropFiles.readRegularFile(opened.entry(claimed), limit: limit, followingLinks: false))
        }
        if case let .notClaimed(outcome) = claim { return outcome }
        guard case let .document(opened, read) = claim else { return .claimed }
        let reply = await answer(read, folder: folder)
        for attempt in 1...3 {
            let written: Bool = await FileDropFiles.offPool(on: files) { [self] in
            do {
                var encoded = try FileDropDocument.encode(reply, id: id)
                // An answer its consumer would refuse to read is replaced by one it can: the
                // effect has happened, and the caller must learn it did not get the answer.
                if encoded.count > limit {
                    encoded = try FileDropDocument.encode(
                        Self.refusal(500, "the answer's document would be \(encoded.count) bytes; the limit is \(limit)"), id: id)
                }
                try FileDropFiles.writeAtomically(encoded, to: opened.entry(response), durable: durable)
            } catch {
                // Answered already (the write never replaces), or tried again; after the last
                // try it stays claimed for the next start to answer as interrupted.
                if !opened.exists(response) && !Self.isArchived(response, in: opened) {
                    report(folder.url.appendingPathComponent(response), "the answer could not be written (attempt \(attempt) of 3): \(error)")
                    return false
                }
            }
            Self.markServed(id, in: opened, durable: durable)
            return true
            }
            if written { break }
            if attempt < 3 { try? await Task.sleep(for: .milliseconds(attempt == 1 ? 200 : 1000)) }
        }
        return .claimed
    }

    /// Marks answered request `id` served: its claimed document becomes the served marker,
    /// next to the response, or in the archive if the consumer has archived the response
    /// already (possibly between the provider's write and this move, when it found no marker
    /// to take along): no marker is left behind in the folder the provider polls.
    static func markServed(_ id: String, in folder: FileDropFiles.OpenFolder, durable: Bool) {
        let claimed = folder.entry(id + FileDropDocument.claimedSuffix)
        let served = folder.entry(id + FileDropDocument.servedSuffix)
        let response = id + FileDropDocument.responseSuffix
        // Markers go only into an archive that is a folder itself, not a link to elsewhere.
        guard let archive = try? folder.subfolder(FileDropDocument.archiveFolder) else {
            retire(claimed, as: served, durable: durable)
            return
        }
        let archivedServed = archive.entry(id + FileDropDocument.servedSuffix)
        if archive.exists(response) {
            retire(claimed, as: archivedServed, durable: durable)
            return
        }
        retire(claimed, as: served, durable: durable)
        if archive.exists(response) { _ = FileDropFiles.move(served, to: archivedServed, durable: durable) }
    }

    /// ``markServed(_:in:durable:)`` in the folder at `folder` (which must be a folder itself,
    /// not a link).
    static func markServed(_ id: String, in folder: URL, durable: Bool) {
        guard let opened = try? FileDropFiles.OpenFolder(folder) else { return }
        markServed(id, in: opened, durable: durable)
    }

    /// Renames a claimed document to its served marker; if the id has that marker already
    /// (a request dropped again under an answered id), the claim is removed instead, so no
    /// claim stays behind for ever (it would count as in progress and never expire).
    static func retire(_ claimed: FileDropFiles.Location, as served: FileDropFiles.Location, durable: Bool) {
        if !FileDropFiles.move(claimed, to: served, durable: durable), FileDropFiles.exists(served) {
            FileDropFiles.remove(claimed)
        }
    }

    /// The response to a request document, checked against the folder it was dropped in.
    func answer(_ read: FileDropFiles.FileRead, folder: Folder) async -> RPCResponse {
        let data: Data
        switch read {
        case let .read(contents): data = contents
        case .tooLarge: return Self.refusal(413, "the request document is larger than \(options.maximumDocumentBytes) bytes")
        case .notRegular: return Self.refusal(400, "the request document is not a regular file")
        case let .unreadable(reason):
            // Not served: the consumer may submit it again.
            return Self.refusal(503, "the request document could not be read: \(reason)")
        }
        guard let document = FileDropDocument.decodeRequest(data) else { return Self.refusal(400, "the request document is malformed") }
        guard document.rpcName == folder.endpoint.rpcName else {
            return Self.refusal(400, "a request for \(document.rpcName) was dropped into the folder of \(folder.endpoint.rpcName)")
        }
        guard folder.service.status != .disabled else { return Self.refusal(503, "\(folder.service.spec) is disabled") }
        if let version = document.version {
            let inService = folder.service.versions?.contains(version) ?? true
            let inEndpoint = folder.endpoint.versions?.contains(version) ?? true
            guard inService, inEndpoint else { return Self.refusal(400, "\(document.rpcName) is not served in version \(version)") }
        }
        // The folder grants access to its endpoint only: the route the document names must be
        // that endpoint's, and it is served as the kind of connection that endpoint needs.
        let endpoint: EndpointDescriptor
        switch Self.servingEndpoint(verb: document.verb, path: document.path, of: folder.endpoint.rpcName, router: router) {
        case let .served(found): endpoint = found
        case let .refused(reason): return Self.refusal(400, reason)
        }
        return await router.handle(ServerRequest(verb: document.verb, path: document.path, headers: document.headers, body: document.body), auth: endpoint.auth)
    }

    /// What serving `verb path` as endpoint `rpcName` comes to.
    enum ServingEndpoint: Equatable {
        case served(EndpointDescriptor)
        case refused(String)
    }

    /// The endpoint `rpcName` if `router` serves `verb path` as it: the route must be that
    /// endpoint's, and where routes overlap (`/v1/things/{id}` and `/v1/things/special`) the
    /// router serves the first that matches, which may be another endpoint's, one whose
    /// service status and versions the folder did not check (found by review).
    static func servingEndpoint(verb: String, path: String, of rpcName: String, router: RPCRouter) -> ServingEndpoint {
        let matching = router.endpoints(verb: verb, path: path)
        guard let endpoint = matching.first(where: { $0.rpcName == rpcName }) else {
            return .refused("\(verb) \(path.prefix(200)) is not a route of \(rpcName)")
        }
        if let served = matching.first(where: { $0.auth == endpoint.auth }), served.rpcName != rpcName {
            return .refused("\(verb) \(path.prefix(200)) is served by \(served.rpcName), not \(rpcName)")
        }
        return .served(endpoint)
    }

    /// Tells the app's diagnostics about a problem survived.
    func report(_ url: URL, _ problem: String) {
        options.diagnostics?(FileDropDiagnostic(path: url.path, problem: problem))
    }

    /// Tells the app's diagnostics about a problem with `url` that may persist (it would be
    /// met at every look): said once, and again only if it changes, or after it cleared.
    func reportOnce(_ url: URL, _ problem: String) {
        let new = reported.withLock { said in
            guard said[url.path] != problem else { return false }
            said[url.path] = problem
            return true
        }
        if new { report(url, problem) }
    }

    static func refusal(_ status: Int, _ reason: String) -> RPCResponse {
        RPCResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data(reason.utf8))
    }
}
