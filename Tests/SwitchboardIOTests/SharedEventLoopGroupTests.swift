import Foundation
@testable import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The shared group: one loop per active processor, and it cannot be shut down. Each test
/// runs in a process of its own, so the group is started fresh, and a shutdown that did stop
/// it could not break the other tests of this process.
@Suite(.timeLimit(.minutes(2)))
struct SharedEventLoopGroupTests {
    #if os(Linux)
    @Test func shuttingDownTheSharedGroupLeavesItServing() async {
        await #expect(processExitsWith: .exitCode(0)) {
            let group = EventLoopGroup.shared
            // A listener registered before the shutdown...
            let listener = try TCPListener()
            let accepted = EventLoopCoreTests.Box<Int32>(-1)
            let loop = group.next()
            let acceptor = Acceptor(listener: listener, loop: loop) { descriptor in accepted.update { $0 = descriptor } }
            acceptor.start()
            // Queued after the registration: once it has run, the listener is watched.
            _ = await loop.turnCount

            await group.shutdown()

            // ...still accepts after it.
            let client = try TCPSocket.connect(host: "127.0.0.1", port: listener.port, timeout: .seconds(5))
            let deadline = ContinuousClock.now + .seconds(5)
            while accepted.value < 0 && ContinuousClock.now < deadline { usleep(10_000) }
            let acceptedAfter = accepted.value >= 0
            acceptor.stop()
            client.close()
            if accepted.value >= 0 { _ = close(accepted.value) }
            guard acceptedAfter else { exit(1) }
            // Every loop still runs work on its own thread (a stopped loop's runs elsewhere).
            for member in group.loops {
                let onLoop = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    member.execute { continuation.resume(returning: member.inEventLoop) }
                }
                guard onLoop else { exit(2) }
            }
            // And takes new registrations (which fail on a loop that has shut down).
            guard let fresh = try? await acceptedConnection(on: group.next()) else { exit(3) }
            fresh.acceptor.stop()
            fresh.client.close()
            _ = close(fresh.server)
            exit(0)
        }
    }

    @Test func theSharedGroupHasALoopPerActiveProcessor() async {
        await #expect(processExitsWith: .exitCode(0)) {
            // A fresh process has descriptors to spare, so the shared group does not fall back
            // to a single loop (EventLoopGroupStartTests covers that fallback).
            let processors = ProcessInfo.processInfo.activeProcessorCount
            let shared = EventLoopGroup.shared.loops.count
            // One thread per loop, each named for the system.
            let threads = EventLoopGroupStartTests.threads(named: "sb.shared-")
            // A group made with the defaults has as many.
            let group = try EventLoopGroup(name: "defaults")
            let defaults = group.loops.count
            await group.shutdown()
            exit(shared == processors && threads == processors && defaults == processors ? 0 : 1)
        }
    }
    #endif
}
