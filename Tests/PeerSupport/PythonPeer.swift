import Foundation

/// Runs a Python peer from Tests/Peers as a child process, bounded in time.
public final class PythonPeer: @unchecked Sendable {
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Peers")

    public let process = Process()
    public let input = Pipe()
    public let output = Pipe()
    /// Output read past the first line, kept for `finish`.
    private var leftover = Data()

    /// A peer that exits early (a missing module, a crash) must fail its test, not kill the
    /// whole test process with SIGPIPE when its input is written: writes get EPIPE instead.
    private static let pipeSignalIgnored: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    public init(script: String, arguments: [String] = []) throws {
        Self.pipeSignalIgnored
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.directory.appendingPathComponent(script).path] + arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// The first line the peer prints (servers print their port), waiting at most `timeout`.
    public func firstLine(timeout: TimeInterval = 20) -> String? {
        let handle = output.fileHandleForReading
        var collected = Data()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            // `availableData` blocks until output comes: wait for it here, within the deadline,
            // so a peer that hangs silently fails the test instead of hanging it.
            var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(1, min(1000, deadline.timeIntervalSinceNow * 1000)))
            guard poll(&descriptor, 1, milliseconds) > 0 else { continue }
            let chunk = handle.availableData
            if chunk.isEmpty { return nil }
            collected += chunk
            if let newline = collected.firstIndex(of: 10) {
                leftover = Data(collected[collected.index(after: newline)...])
                return String(decoding: collected[..<newline], as: UTF8.self)
            }
        }
        return nil
    }

    /// Waits for the peer to exit (at most `timeout`) and returns its status and output.
    /// Output is read while waiting: a peer that prints more than a pipe holds would
    /// otherwise block on its write and never exit.
    public func finish(timeout: TimeInterval = 60) -> (status: Int32, output: String) {
        let deadline = Date().addingTimeInterval(timeout)
        let handle = output.fileHandleForReading
        var all = Data(leftover)
        leftover = Data()
        var ended = false
        while !ended, Date() < deadline {
            var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(max(1, min(200, deadline.timeIntervalSinceNow * 1000)))
            guard poll(&descriptor, 1, milliseconds) > 0 else { continue }
            let chunk = handle.availableData
            if chunk.isEmpty { ended = true } else { all.append(chunk) }
        }
        if process.isRunning, !ended { process.terminate() }
        process.waitUntilExit()
        if !ended { all.append(handle.readDataToEndOfFile()) }
        return (process.terminationStatus, String(decoding: all, as: UTF8.self))
    }

    // The blocking calls above must not run on Swift's small cooperative pool, where they
    // would starve other tests' tasks; these run them on a thread of their own.

    /// `firstLine` on a dedicated thread.
    /// Writes `data` to the peer's standard input from a thread of its own, then closes it:
    /// input and answers may each exceed a pipe's buffer, and a writer that waited for the
    /// reader would wait for ever.
    public func writeInBackground(_ data: Data) {
        let writer = input.fileHandleForWriting
        Thread.detachNewThread {
            try? writer.write(contentsOf: data)
            try? writer.close()
        }
    }

    public func firstLineAsync(timeout: TimeInterval = 20) async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.firstLine(timeout: timeout)) }
        }
    }

    /// `finish` on a dedicated thread.
    public func finishAsync(timeout: TimeInterval = 60) async -> (status: Int32, output: String) {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.finish(timeout: timeout)) }
        }
    }

    /// `stop` on a dedicated thread.
    public func stopAsync() async -> String {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: self.stop()) }
        }
    }

    /// Stops a server peer and returns what it printed.
    @discardableResult
    public func stop() -> String {
        try? input.fileHandleForWriting.close()
        return finish(timeout: 10).output
    }
}
