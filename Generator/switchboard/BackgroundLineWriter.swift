import Foundation
internal import SwitchboardThreads
import SwitchboardCLI

/// Standard output for a server's log, written by a thread of its own so that no handler
/// ever waits on the reader. Written in the handlers, a reader that keeps the pipe open but
/// stops reading (a harness that read the URL line and no more) filled the pipe after some
/// 64 KiB, every handler then blocked in its write, and every call timed out.
///
/// At most ``maximumLines`` lines or ``maximumBytes`` bytes wait besides the batch being
/// written; past that, lines are dropped and counted, and after the next batch the writer
/// writes one line saying how many were dropped. Lines queued before ``start()`` wait for
/// it, so what the command writes directly before then (the address lines a harness reads)
/// comes first.
final class BackgroundLineWriter: @unchecked Sendable {
    let maximumLines: Int
    let maximumBytes: Int
    private let handle: FileHandle
    /// Guards every variable below it.
    private let condition = NSCondition()
    private var pending: [String] = []
    private var pendingBytes = 0
    private var dropped = 0
    private var writing = false
    private var started = false
    /// No thread could be had: lines are written by whoever prints them, as they come.
    private var writesDirectly = false

    init(handle: FileHandle = .standardOutput, maximumLines: Int = 10_000, maximumBytes: Int = 1 << 20) {
        self.handle = handle
        self.maximumLines = maximumLines
        self.maximumBytes = maximumBytes
    }

    /// Starts the writing thread (once); queued lines are written from then on.
    func start() {
        condition.lock()
        defer { condition.unlock() }
        guard !started else { return }
        started = true
        do throws(SystemThread.StartError) {
            try SystemThread.start(stackSize: 1 << 20) { [self] in run() }
        } catch {
            // Refused (the system's thread limit): what waits is written now and later lines
            // as they come, holding their printer while the reader lags, rather than dropped
            // (a Foundation thread refused this way never wrote them).
            writesDirectly = true
            let waiting = pending.joined()
            pending = []
            pendingBytes = 0
            CommandLineTool.writeIgnoringClosedOutput(waiting, to: handle)
        }
    }

    /// Queues `text` as a line, made safe for a terminal as `ChatCommandSupport.printLine`
    /// makes it; returns at once, dropping the line when the queue is full.
    func printLine(_ text: String) {
        let line = TerminalText.sanitized(text) + "\n"
        let size = line.utf8.count
        condition.lock()
        defer { condition.unlock() }
        if writesDirectly {
            CommandLineTool.writeIgnoringClosedOutput(line, to: handle)
            return
        }
        guard pending.count < maximumLines, pendingBytes + size <= maximumBytes else {
            dropped += 1
            return
        }
        pending.append(line)
        pendingBytes += size
        condition.broadcast()
    }

    /// Waits until everything queued is written, or `seconds` pass (a reader that stopped
    /// must not hold up an exit).
    func flush(within seconds: Double) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while started && (writing || !pending.isEmpty || dropped > 0) {
            if !condition.wait(until: deadline) { return }
        }
    }

    private func run() {
        while true {
            condition.lock()
            while pending.isEmpty && dropped == 0 { condition.wait() }
            let batch = pending
            let lost = dropped
            pending = []
            pendingBytes = 0
            dropped = 0
            writing = true
            condition.unlock()

            // Lines are dropped only while the queue is full, so after the lines queued
            // before them: the count follows the batch.
            var text = batch.joined()
            if lost > 0 {
                text += "switchboard: \(lost) log line\(lost == 1 ? "" : "s") dropped: standard output was not read fast enough\n"
            }
            CommandLineTool.writeIgnoringClosedOutput(text, to: handle)

            condition.lock()
            writing = false
            condition.broadcast()
            condition.unlock()
        }
    }
}
