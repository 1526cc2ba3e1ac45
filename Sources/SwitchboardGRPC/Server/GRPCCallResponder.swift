import SwitchboardIO
import SwitchboardRuntime

/// What a handler's task answers its call through: the call while its stream is open, then
/// nothing. A handler that ignores cancellation so keeps this alone alive, not the call and,
/// through it, the connection.
///
/// Not a weak reference to the call: a weak reference gives its object a side table, which
/// makes every later retain and release of it several times dearer (with the timers' weak
/// references, about 1,600 instructions a call).
final class GRPCCallResponder: @unchecked Sendable {
    /// The call's connection lock: a handler may finish off the loop (where its platform has
    /// no task executors), while the stream closes on the loop.
    private let lock: AdaptiveLock
    private var call: GRPCServerCall?
    /// The server's request bytes, and what a stream that closed while the handler still ran
    /// handed over: held until the handler returns, so handlers that outlive their streams
    /// (a reset, a deadline, a handler ignoring cancellation) stay within the budget instead of
    /// each freeing its share for the next (found by review: rapid reset by other means).
    private let budget: ByteBudget
    private var isHandlerRunning = true
    private var owed = 0

    init(call: GRPCServerCall, lock: AdaptiveLock, budget: ByteBudget) {
        self.call = call
        self.lock = lock
        self.budget = budget
    }

    /// For a stream closing with the lock held: the bytes it may give back now, or 0 when the
    /// handler still runs (they go back when it returns).
    func streamClosedUnderLock(taken: Int) -> Int {
        guard isHandlerRunning else { return taken }
        owed += taken
        return 0
    }

    /// The handler has returned: what its closed stream left with it goes back.
    func handlerFinished() {
        let bytes = lock.withLock { () -> Int in
            isHandlerRunning = false
            defer { owed = 0 }
            return owed
        }
        if bytes > 0 { budget.give(bytes) }
    }

    /// The call, with the right to answer it claimed: nil once its stream has closed or it
    /// has answered otherwise (a deadline). Once. One pass under the lock for both.
    func claimCall() -> GRPCServerCall? {
        var claimed = false
        let call = lock.withLock { () -> GRPCServerCall? in
            defer { self.call = nil }
            let call = self.call
            claimed = call?.claimUnderLock() ?? false
            return call
        }
        // One not claimed is released here, after the lock: the last reference to a call may
        // take its connection, and the lock with it.
        return claimed ? call : nil
    }

    /// Lets the call go: its stream has closed. The reference is handed out of the lock and
    /// dropped after it (the last reference to a call may take its connection's lock with it).
    func release() {
        let call = lock.withLock { releaseUnderLock() }
        withExtendedLifetime(call) {}
    }

    /// ``release()`` for a caller holding the lock: the call is handed back, to be released
    /// after the lock.
    func releaseUnderLock() -> GRPCServerCall? {
        defer { call = nil }
        return call
    }
}
