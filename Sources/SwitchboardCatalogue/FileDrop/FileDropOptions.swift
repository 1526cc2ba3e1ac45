/// Limits and timing of the file-drop protocol, each with a safe default.
public struct FileDropOptions: Sendable {
    /// How often folders are looked at: 20 ms. Polling works the same on every platform and
    /// file system, shared app-group containers included.
    public var pollInterval: Duration = .milliseconds(20)
    /// The largest document read: 4 MiB. A larger one is answered 413 and never loaded.
    public var maximumDocumentBytes = 4 << 20
    /// How many requests a provider serves at once: 8.
    public var maximumConcurrentRequests = 8
    /// Whether documents and renames are flushed to disk (fsync of file and folder), so they
    /// survive a power cut and not only a killed process: on by default.
    public var durable = true

    /// The defaults.
    public init() {}
}
