import Foundation
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An acceptor out of descriptors: its listener stays readable (level-triggered) while
/// accept fails with EMFILE, so without its pause the loop would turn without end. Runs in
/// a process of its own: the descriptor limit is the whole process's.
@Suite(.timeLimit(.minutes(2)))
struct AcceptorExhaustionTests {
    #if os(Linux)
    @Test func anAcceptorOutOfDescriptorsWaitsWithoutSpinningThenAccepts() async {
        let result = await #expect(processExitsWith: .exitCode(0), observing: [\.standardErrorContent]) {
            // Bounded whatever happens: the parent waits for this process.
            Thread.detachNewThread {
                sleep(60)
                AcceptorExhaustionTests.fail(9, "timed out")
            }
            let loop = try EventLoop(name: "emfile-test")
            let listener = try TCPListener()
            let accepted = EventLoopCoreTests.Box<Int32>(-1)
            let acceptor = Acceptor(listener: listener, loop: loop) { descriptor in accepted.update { $0 = descriptor } }
            acceptor.start()
            // The client's socket exists before the descriptors run out; connecting it needs none.
            let client = SocketDescriptor.openSocket(family: AF_INET, type: Int32(SOCK_STREAM.rawValue), protocol: 0)
            guard client >= 0 else { AcceptorExhaustionTests.fail(10, "no client socket") }
            // Warm up what the waits below use (the registration, the loop's round trip, the
            // pool's threads and timers), so that nothing but the acceptor needs a descriptor.
            _ = await loop.turnCount
            try await Task.sleep(for: .milliseconds(20))

            let held = EventLoopGroupStartTests.leaveFreeDescriptors(0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(listener.port).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    SocketConnector.systemConnect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { AcceptorExhaustionTests.fail(11, "connect failed: errno \(errno)") }
            let started = ContinuousClock.now
            let before = await loop.turnCount
            usleep(300_000)
            let turns = await loop.turnCount - before
            let elapsed = ContinuousClock.now - started
            let acceptedEarly = accepted.value >= 0
            // The connection still waits in the kernel's queue, for a descriptor.
            var queued = pollfd(fd: listener.handle.number, events: Int16(POLLIN), revents: 0)
            let stillQueued = poll(&queued, 1, 0) == 1
            for descriptor in held { _ = close(descriptor) }
            guard !acceptedEarly else { AcceptorExhaustionTests.fail(12, "accepted with no descriptor free") }
            // Paused, the loop turns about twice per 50 ms pause (the timer, then the readiness
            // once watched again): some 12 turns in 300 ms. Spinning, it would turn thousands of
            // times. The bound grows with the time taken, for a loaded machine that slept longer.
            let milliseconds = Int(elapsed.components.seconds) * 1000 + Int(elapsed.components.attoseconds / 1_000_000_000_000_000)
            guard turns < 20 + milliseconds / 10 else {
                AcceptorExhaustionTests.fail(13, "the loop turned \(turns) times in \(milliseconds) ms")
            }
            guard stillQueued else { AcceptorExhaustionTests.fail(14, "the connection is no longer queued") }

            // Descriptors free again: the waiting client is accepted, and served.
            let deadline = ContinuousClock.now + .seconds(5)
            while accepted.value < 0 && ContinuousClock.now < deadline { usleep(10_000) }
            let server = accepted.value
            guard server >= 0 else { AcceptorExhaustionTests.fail(15, "not accepted within 5 s of descriptors freeing") }
            let sent = Array("ok".utf8).withUnsafeBytes { send(server, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            var readable = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            var reply = [UInt8](repeating: 0, count: 2)
            var received = -1
            if sent == 2 && poll(&readable, 1, 5000) == 1 {
                received = reply.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            }
            acceptor.stop()
            _ = close(server)
            _ = close(client)
            await loop.shutdown()
            guard received == 2 && reply == Array("ok".utf8) else { AcceptorExhaustionTests.fail(16, "the accepted socket does not reach the client") }
            exit(0)
        }
        if let result, result.exitStatus != .exitCode(0) {
            Issue.record("the child process said: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }
    }

    /// Ends the child process with `code`, saying why on its standard error.
    static func fail(_ code: Int32, _ reason: String) -> Never {
        FileHandle.standardError.write(Data("\(reason)\n".utf8))
        exit(code)
    }
    #endif
}
