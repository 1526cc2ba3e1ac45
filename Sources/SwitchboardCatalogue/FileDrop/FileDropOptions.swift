/// Limits and timing of the file-drop protocol, each with a safe default.
public struct FileDropOptions: Sendable {
    /// How often folders are looked at: 20 ms (at least 1 ms). Polling works the same on
    /// every platform and file system, shared app-group containers included. A look costs
    /// one `stat` per folder whose listing is still fresh (see ``fullScanInterval``).
    public var pollInterval: Duration = .milliseconds(20)
    /// ``pollInterval`` as waited: at least 1 ms, since a zero wait would spin a core.
    var effectivePollInterval: Duration { max(pollInterval, .milliseconds(1)) }
    /// How long a folder's listing is trusted while the folder's modification time stays
    /// the same, and how long a provider works through the backlog one scan found before
    /// scanning again: 1 s. A backlog of n requests is then listed about once a second, not
    /// once per request served, and an idle folder of old documents is listed once a second,
    /// not at every poll.
    public var fullScanInterval: Duration = .seconds(1)
    /// How long ``FileDropProvider/stop()`` waits for the requests in hand: 30 s. Past it,
    /// `stop` returns; a handler still running answers when it finishes, or, if the process
    /// ends first, the next start answers its request as interrupted.
    public var stopTimeout: Duration = .seconds(30)
    /// The largest document read: 4 MiB. A larger one is answered 413 and never loaded.
    public var maximumDocumentBytes = 4 << 20
    /// How many requests a provider serves at once: 8.
    public var maximumConcurrentRequests = 8
    /// How many consumer subfolders of one endpoint's folder a provider looks at a scan: 256 (a
    /// negative value counts as 0, which serves the endpoint's own folder only). Each costs a
    /// `stat` at every poll and a listing whenever it changes, and whoever can write into the
    /// folder can make them. Past the limit they are taken in turn: each new listing of the
    /// endpoint's folder (at least every ``fullScanInterval``) takes the next ones by name after
    /// those the last one took, starting over past the last name, so every folder is reached
    /// within (folders ÷ limit) listings; folders whose last listing found requests are kept
    /// besides (at most as many again), and ``diagnostics`` hears of it once. Recovery on start
    /// and the retention sweep go through every consumer folder.
    public var maximumConsumerFolders = 256
    /// Whether documents and renames are flushed to disk (fsync of file and folder), so they
    /// survive a power cut and not only a killed process: on by default.
    public var durable = true
    /// How long a finished request's documents stay after the last change to any of them
    /// (written, renamed or archived): 7 days, and never less than ``minimumRetention`` (a
    /// shorter value counts as that, so an answer outlives its consumer's wait). Answered
    /// requests, read or not, and withdrawn ones older than this are removed by the provider,
    /// and so is a temporary file a crashed writer left; requests still waiting or being
    /// served are never removed. An id answered within this time is not served again if
    /// dropped again; after it, it would be. `nil` keeps every document.
    public var retention: Duration? = .seconds(7 * 24 * 3600)
    /// How often a provider looks for documents past ``retention``, off the path that serves
    /// requests: every hour (at least every second).
    public var retentionSweepInterval: Duration = .seconds(3600)
    /// Receives the problems a provider survived, for the app's logs: an answer it could not
    /// write (tried three times; the request stays claimed and the next start answers it as
    /// interrupted), an interrupted answer it could not write on start, a folder it could not
    /// list or open (a request whose folder could not be opened is tried again at the next
    /// poll), an endpoint's folder with more consumer folders than ``maximumConsumerFolders``,
    /// a request it could not claim for a reason other than another process taking it first
    /// (its claimed name taken already, a rename the system refused; it is not tried again
    /// while its file stays). A problem with a folder is said
    /// once, not at every poll: again only if it changes, or once it cleared and came back.
    /// Called from the provider's file queues: hand it to a logger and return.
    public var diagnostics: (@Sendable (FileDropDiagnostic) -> Void)?
    /// The shortest retention honoured: one hour.
    public static let minimumRetention: Duration = .seconds(3600)

    /// The defaults.
    public init() {}
}

/// A problem a file-drop provider survived.
public struct FileDropDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// The file or folder concerned.
    public var path: String
    /// What went wrong, with the system's reason.
    public var problem: String

    /// Creates a report.
    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(path): \(problem)" }
}
