import Foundation
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// Sockets for hand-written peers and socket pairs, always close-on-exec.
///
/// The test process spawns children of itself (swift-testing's exit tests, which close only
/// the descriptors above their own pipes). A child that inherited a test's socket held it open
/// after the test closed it, so a peer the test had "closed" still took writes (a collected
/// write expected to fail with EPIPE succeeded in CI). Every test socket is made here.
public enum TestSockets {
    /// A new stream socket of `family` (-1 with `errno` set if the system refuses).
    public static func stream(family: Int32 = AF_INET) -> Int32 {
        #if canImport(Glibc)
        return socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        return closingOnExec(socket(family, SOCK_STREAM, 0))
        #endif
    }

    /// A connection accepted on `listener` (-1 with `errno` set if none could be).
    /// (Glibc's Swift module has no `accept4`: the flag is set just after, as on Apple platforms.)
    public static func accept(on listener: Int32) -> Int32 {
        #if canImport(Glibc)
        return closingOnExec(Glibc.accept(listener, nil, nil))
        #else
        return closingOnExec(Darwin.accept(listener, nil, nil))
        #endif
    }

    /// Two connected local stream sockets; `nil` if the system refuses.
    public static func pair() -> (Int32, Int32)? {
        var descriptors: [Int32] = [0, 0]
        #if canImport(Glibc)
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &descriptors) == 0 else { return nil }
        #else
        guard socketpair(AF_UNIX, SOCK_STREAM, 0, &descriptors) == 0 else { return nil }
        _ = closingOnExec(descriptors[0])
        _ = closingOnExec(descriptors[1])
        #endif
        return (descriptors[0], descriptors[1])
    }

    /// Whether `descriptor` is closed in processes this one starts (for the test that checks
    /// the helpers above).
    public static func isCloseOnExec(_ descriptor: Int32) -> Bool {
        fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0
    }

    private static func closingOnExec(_ descriptor: Int32) -> Int32 {
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        return descriptor
    }
}

extension TestSockets {
    /// Waits up to `seconds` for a connection to accept on `listener`, in short slices so that
    /// `stopped` is noticed soon (a listener shut down wakes `poll` on Linux, not everywhere).
    public static func awaitConnection(on listener: Int32, seconds: Double = 20, stopped: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline, !stopped() {
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            if poll(&ready, 1, 50) > 0 { return !stopped() }
        }
        return false
    }
}
