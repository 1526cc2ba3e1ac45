import Foundation
import SwitchboardIO
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A group that runs out of descriptors while starting its loops leaves nothing running, and
/// the shared group starts with what the process has left instead of stopping the process.
/// Each test runs in a process of its own: the descriptor limit is the whole process's.
@Suite struct EventLoopGroupStartTests {
    #if os(Linux)
    @Test func aGroupThatCannotStartEveryLoopStopsThoseItStarted() async {
        await #expect(processExitsWith: .exitCode(0)) {
            // Room for two loops (two descriptors each) and one more descriptor, not for eight.
            let held = EventLoopGroupStartTests.leaveFreeDescriptors(5)
            var threw = false
            do {
                _ = try EventLoopGroup(loopCount: 8, name: "partial")
            } catch {
                threw = true
            }
            for descriptor in held { close(descriptor) }
            guard threw else { exit(1) }
            // The loops that did start were stopped: their threads are gone.
            for _ in 0..<500 where EventLoopGroupStartTests.threads(named: "partial") > 0 { usleep(10_000) }
            exit(EventLoopGroupStartTests.threads(named: "partial") > 0 ? 2 : 0)
        }
    }

    @Test func theSharedGroupStartsWithOneLoopWhenDescriptorsAreShort() async {
        await #expect(processExitsWith: .exitCode(0)) {
            // Room for one loop, not two.
            let held = EventLoopGroupStartTests.leaveFreeDescriptors(3)
            let count = EventLoopGroup.shared.loops.count
            for descriptor in held { close(descriptor) }
            // Its thread is named for the system (which also shows the count above is sound).
            // The first try's loop of the same name was stopped, and its thread may still be on
            // its way out for a moment: since a stopped loop frees its descriptors before it
            // reports, the second try no longer waits 100 ms for them, and CI saw both threads.
            for _ in 0..<500 where EventLoopGroupStartTests.threads(named: "sb.shared-0") > 1 { usleep(10_000) }
            exit(count == 1 && EventLoopGroupStartTests.threads(named: "sb.shared-0") == 1 ? 0 : 3)
        }
    }

    /// Takes every free descriptor below a limit of 4,096, then gives back `free` of them:
    /// exactly that many can be opened next, whatever the process had open before.
    static func leaveFreeDescriptors(_ free: Int) -> [Int32] {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = min(limit.rlim_cur, 4096)
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        var held: [Int32] = []
        held.reserveCapacity(4096)
        while true {
            let descriptor = dup(0)
            guard descriptor >= 0 else { break }
            held.append(descriptor)
        }
        for descriptor in held.suffix(free) { close(descriptor) }
        return Array(held.dropLast(free))
    }

    /// How many of the process's threads have a name starting with `prefix`.
    static func threads(named prefix: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8) else { return false }
            return name.hasPrefix(prefix)
        }.count
    }
    #endif
}
