import Foundation
internal import SwitchboardThreads

/// Threads with a stack sized for the deepest schema, where the schema compiler and the
/// emitters run.
///
/// Parsing, validating, translating and rendering recurse once or more per level of nesting,
/// and a debug build (what `swift run switchboard` and a build plugin's tool may be) spends
/// about 16 KB of stack per level in the parser alone: 32 levels, the default limit, overflowed
/// the 512 KB that macOS gives a secondary thread, a Dispatch worker or a Swift concurrency
/// thread, none of which a caller can enlarge. So the work moves to threads of its own.
package enum DeepStack {
    /// Bytes of stack for each thread: room for 256 levels (the most ``SchemaLimits`` allows)
    /// in a debug build several times over. Address space only; pages are used as touched.
    package static let size = 64 << 20

    /// Runs `body` on a new thread with ``size`` bytes of stack, waits for it, and returns what
    /// it returned. Where the system refuses a thread (its thread limit reached), `body` runs on
    /// the calling thread instead: most work fits there, and waiting for a thread that never
    /// starts would hang.
    package static func run<Result>(_ body: @escaping () -> Result) -> Result {
        runIfPossible(body) ?? body()
    }

    /// Runs `body` as ``run(_:)`` does, or returns nil without running it when the system
    /// refuses the thread: for work that must not run on the caller's stack (input deep enough
    /// to need the room).
    package static func runIfPossible<Result>(_ body: @escaping () -> Result) -> Result? {
        let slot = ResultSlot<Result>()
        let refused = start([UncheckedWork { slot.value = body() }], runningRefusedHere: false)
        return refused ? nil : slot.value
    }

    /// Runs every one of `works` on a thread of its own (each with ``size`` bytes of stack) and
    /// returns once all have finished; one whose thread the system refuses runs on the calling
    /// thread, after the others have started.
    static func start(_ works: [UncheckedWork]) {
        _ = start(works, runningRefusedHere: true)
    }

    /// Whether a thread was refused (its work then ran here, or not at all).
    private static func start(_ works: [UncheckedWork], runningRefusedHere: Bool) -> Bool {
        let finished = DispatchGroup()
        var refused: [UncheckedWork] = []
        for work in works {
            finished.enter()
            do {
                // Not a Foundation `Thread`: on Linux its start ignores a refused thread, and
                // the wait below never ended (found by review). The work is let go before the
                // wait ends, so nothing it holds outlives the call.
                let handed = HandedWork(work)
                try SystemThread.start(stackSize: size) {
                    handed.take()?.run()
                    finished.leave()
                }
            } catch {
                finished.leave()
                refused.append(work)
            }
        }
        if runningRefusedHere { for work in refused { work.run() } }
        finished.wait()
        return !refused.isEmpty
    }

    /// A closure handed to another thread; the caller waits for it to finish before it reads
    /// anything the closure wrote, which the compiler cannot see.
    struct UncheckedWork: @unchecked Sendable {
        let run: () -> Void
    }

    /// A work its thread takes out before it says it has finished, so what the work holds is
    /// released before the waiting caller goes on (a leak checker saw it still held).
    final class HandedWork: @unchecked Sendable {
        private var work: UncheckedWork?
        init(_ work: UncheckedWork) { self.work = work }
        /// The work, once; only its thread calls this.
        func take() -> UncheckedWork? {
            defer { work = nil }
            return work
        }
    }

    /// Where a thread leaves its result; read only after the thread has finished.
    final class ResultSlot<Value>: @unchecked Sendable {
        var value: Value?
    }
}
