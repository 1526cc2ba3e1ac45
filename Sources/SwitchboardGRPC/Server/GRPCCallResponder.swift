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

    init(call: GRPCServerCall, lock: AdaptiveLock) {
        self.call = call
        self.lock = lock
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
