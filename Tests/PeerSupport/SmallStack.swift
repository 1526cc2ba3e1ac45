import Foundation

/// Runs `body` on a thread of its own with `stackSize` bytes of stack (512 KB: what macOS and
/// iOS give a secondary thread, a Dispatch worker or a Swift concurrency thread), waits for
/// it, and returns its result: code that recurses per level of its input must fit there.
public func onThread<Result: Sendable>(stackSize: Int = 512 * 1024, _ body: @escaping @Sendable () -> Result) -> Result {
    let slot = ThreadResult<Result>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        slot.value = body()
        done.signal()
    }
    thread.stackSize = stackSize
    thread.start()
    done.wait()
    return slot.value!
}

/// Where the thread leaves its result; read only after it signals.
private final class ThreadResult<Value>: @unchecked Sendable {
    var value: Value?
}
