import Foundation

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
    /// it returned.
    package static func run<Result>(_ body: @escaping () -> Result) -> Result {
        let slot = ResultSlot<Result>()
        start([UncheckedWork { slot.value = body() }])
        return slot.value!
    }

    /// Runs every one of `works` on a thread of its own (each with ``size`` bytes of stack) and
    /// returns once all have finished.
    static func start(_ works: [UncheckedWork]) {
        let finished = DispatchGroup()
        for work in works {
            finished.enter()
            let thread = Thread {
                work.run()
                finished.leave()
            }
            thread.stackSize = size
            thread.start()
        }
        finished.wait()
    }

    /// A closure handed to another thread; the caller waits for it to finish before it reads
    /// anything the closure wrote, which the compiler cannot see.
    struct UncheckedWork: @unchecked Sendable {
        let run: () -> Void
    }

    /// Where a thread leaves its result; read only after the thread has finished.
    final class ResultSlot<Value>: @unchecked Sendable {
        var value: Value?
    }
}
