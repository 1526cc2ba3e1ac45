#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts threads of a given stack size and says when the system refuses one.
///
/// Foundation's `Thread.start()` on Linux ignores a failed `pthread_create` (the thread
/// limit of a container or user, or no memory for the stack): the closure never runs, and
/// whoever waits for it waits for ever. Threads that something waits for start here instead.
package enum SystemThread {
    /// Why a thread could not start.
    package struct StartError: Error, CustomStringConvertible, Sendable {
        /// The `errno`-style code `pthread_create` (or setting the stack size) returned.
        package let code: Int32

        package var description: String { "the system refused a thread: \(String(cString: strerror(code))) (\(code))" }
    }

    /// Runs `body` on a new, detached thread with `stackSize` bytes of stack; throws, without
    /// running it, when the thread cannot be had. `body` is released on that thread as soon as
    /// it returns.
    package static func start(stackSize: Int, _ body: @escaping @Sendable () -> Void) throws(StartError) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        let sizing = pthread_attr_setstacksize(&attributes, stackSize)
        guard sizing == 0 else { throw StartError(code: sizing) }
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(&thread, &attributes, { context in
            #if canImport(Darwin)
            let raw = context
            #else
            guard let raw = context else { return nil }
            #endif
            Unmanaged<Body>.fromOpaque(raw).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw StartError(code: result)
        }
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
