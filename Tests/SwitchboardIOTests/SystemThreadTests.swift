import Foundation
@testable import SwitchboardIO
import SwitchboardThreads
import Testing

/// A thread the system refuses is an error, not a wait for ever: Foundation's `Thread.start()`
/// on Linux ignores a failed `pthread_create`, so a loop whose thread was refused (a
/// container's thread limit reached) hung its creator, and with it everyone asking for the
/// shared group (from the event-loop review). A stack no system can map stands in for the
/// limit here: `pthread_create` fails the same way.
@Suite(.timeLimit(.minutes(1)))
struct SystemThreadTests {
    static let unmappableStack = 1 << 50

    /// Runs `body` on a thread of its own and waits at most 10 s for it: nil if it hung.
    static func within10Seconds<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T? {
        let done = DispatchSemaphore(value: 0)
        let result = Box<T?>(nil)
        Thread.detachNewThread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return result.withLock { $0 }
    }

    @Test func aStartedThreadRunsItsWork() throws {
        let ran = DispatchSemaphore(value: 0)
        let sum = Box(0)
        try SystemThread.start(stackSize: 4 << 20) {
            let total = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3 << 20) { buffer in
                buffer.initialize(repeating: 1)
                return buffer.reduce(0) { $0 + Int($1) }
            }
            sum.withLock { $0 = total }
            ran.signal()
        }
        #expect(ran.wait(timeout: .now() + 10) == .success)
        #expect(sum.withLock { $0 } == 3 << 20)
    }

    @Test func aRefusedThreadThrowsWithoutRunningItsWork() {
        let ran = Box(false)
        let error: SystemThread.StartError? = {
            do throws(SystemThread.StartError) {
                try SystemThread.start(stackSize: Self.unmappableStack) { ran.withLock { $0 = true } }
                return nil
            } catch {
                return error
            }
        }()
        #expect(error != nil)
        #expect(error.map { $0.description.contains("refused a thread") } == true)
        #expect(!ran.withLock { $0 })
    }

    @Test func aLoopWhoseThreadIsRefusedFailsToStartInsteadOfHanging() {
        let outcome = Self.within10Seconds { () -> String in
            do throws(IOError) {
                let loop = try EventLoop(name: "refused", stackSize: Self.unmappableStack)
                loop.shutdownBlocking()
                return "started"
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome?.contains("pthread_create") == true, "\(outcome ?? "hung")")
    }
}

/// A value behind a lock.
private final class Box<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
