import Foundation
#if canImport(Glibc)
internal import CSwitchboardIO
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Accepts a listener's connections on an event loop: when the listener is readable, takes
/// what waits (a bounded number per turn, so one flood cannot hold the loop) and hands each
/// socket on. Out of descriptors, it stops watching for a moment rather than spin, and the
/// connections stay queued in the kernel.
package final class Acceptor: IOHandler, @unchecked Sendable {
    private let listener: TCPListener
    private let loop: EventLoop
    private let accepted: @Sendable (Int32) -> Void
    private let lock = AdaptiveLock()
    private var token: UInt64 = 0
    private var isStopped = false
    /// How many connections one readiness takes at most.
    static let batch = 64

    package init(listener: TCPListener, loop: EventLoop, accepted: @escaping @Sendable (Int32) -> Void) {
        self.listener = listener
        self.loop = loop
        self.accepted = accepted
    }

    package func start() {
        loop.execute { [self] in register() }
    }

    /// On the loop: starts watching the listener. A refused registration (ENOMEM, or the
    /// epoll watch limit) is tried again shortly, rather than leaving a port bound that never
    /// accepts.
    private func register() {
        let registered = lock.withLock { () -> Bool in
            guard !isStopped else { return true }
            return listener.handle.withDescriptor { number -> Bool in
                let flags = fcntl(number, F_GETFL, 0)
                _ = fcntl(number, F_SETFL, flags | O_NONBLOCK)
                do throws(IOError) {
                    token = try loop.register(number, interest: .read, handler: self)
                    return true
                } catch {
                    // A loop that has shut down will never watch it: nothing to retry.
                    if case .shutDown = error { return true }
                    return false
                }
            } ?? true
        }
        if !registered { loop.schedule(after: Self.retryDelay) { [self] in register() } }
    }

    /// How soon a refused registration is tried again.
    static let retryDelay: Duration = .milliseconds(100)

    package func readable() {
        for _ in 0..<Self.batch {
            let (client, failure) = listener.handle.withDescriptor { number -> (Int32, Int32) in
                // Close-on-exec from the start: a process the app forks meanwhile must not
                // inherit (and keep open) the connection.
                let client = SocketDescriptor.acceptConnection(on: number)
                return (client, errno)
            } ?? (-1, EBADF)
            if client >= 0 {
                accepted(client)
                continue
            }
            // EAGAIN (nothing more waits) and a closed or broken listener end the batch.
            switch TCPListener.afterAcceptFailure(failure) {
            case .retry: continue
            case .retryLater:
                pause(for: .milliseconds(50))
                return
            case .stop: return
            }
        }
    }

    package func writable() {}

    /// Its loop shut down: it accepts no more, and its listener closes.
    package func loopStopped() { stop() }

    /// Stops watching for `delay`, for descriptors or memory to free up.
    private func pause(for delay: Duration) {
        lock.withLock {
            guard token != 0, !isStopped else { return }
            _ = listener.handle.withDescriptor { number in loop.reregister(number, token: token, from: .read, to: []) }
        }
        loop.schedule(after: delay) { [self] in resume() }
    }

    /// On the loop: watches the listener again after a pause, trying again if refused.
    private func resume() {
        let resumed = lock.withLock { () -> Bool in
            guard !isStopped, token != 0 else { return true }
            return listener.handle.withDescriptor { number in loop.reregister(number, token: token, from: [], to: .read) } ?? true
        }
        if !resumed { loop.schedule(after: Self.retryDelay) { [self] in resume() } }
    }

    /// Stops accepting and closes the listener before returning, so its port can be bound
    /// again at once; safe from any thread.
    package func stop() {
        lock.withLock {
            guard !isStopped else { return }
            isStopped = true
            if token != 0 {
                _ = listener.handle.withDescriptor { number in loop.deregisterNow(number, token: token, interest: .read) }
                token = 0
            }
            listener.close()
        }
    }
}
