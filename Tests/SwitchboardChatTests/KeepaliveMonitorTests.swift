import SwitchboardChat
import Testing

/// The keepalive decision on a clock that only moves when the test says so.
struct KeepaliveMonitorTests {
    let start = ContinuousClock.now
    let policy = KeepalivePolicy(interval: .seconds(30), timeout: .seconds(10))

    func at(_ seconds: Double) -> ContinuousClock.Instant { start.advanced(by: .seconds(seconds)) }

    @Test func probesAfterAQuietIntervalAndTimesOutWithoutAnAnswer() {
        var monitor = KeepaliveMonitor(policy: policy, now: start)
        #expect(monitor.nextDeadline == at(30))
        #expect(monitor.tick(at: at(29.9)) == .wait)
        #expect(monitor.tick(at: at(30)) == .probe)
        #expect(monitor.isAwaitingAnswer)
        #expect(monitor.nextDeadline == at(40))
        #expect(monitor.tick(at: at(39.9)) == .wait)
        #expect(monitor.tick(at: at(40)) == .timedOut)
    }

    @Test func aZeroIntervalOrTimeoutCountsAsTheMinimum() {
        var monitor = KeepaliveMonitor(policy: KeepalivePolicy(interval: .zero, timeout: .zero), now: start)
        #expect(monitor.tick(at: at(0.049)) == .wait, "a zero interval would probe at once, again and again")
        #expect(monitor.tick(at: at(0.05)) == .probe)
        #expect(monitor.tick(at: at(0.099)) == .wait)
        #expect(monitor.tick(at: at(0.1)) == .timedOut)
    }

    @Test func anAnswerClearsTheProbeAndRestartsTheInterval() {
        var monitor = KeepaliveMonitor(policy: policy, now: start)
        #expect(monitor.tick(at: at(30)) == .probe)
        monitor.heard(at: at(35))
        #expect(!monitor.isAwaitingAnswer)
        #expect(monitor.tick(at: at(40)) == .wait)
        #expect(monitor.nextDeadline == at(65))
        #expect(monitor.tick(at: at(65)) == .probe)
    }

    @Test func trafficPostponesTheProbe() {
        var monitor = KeepaliveMonitor(policy: policy, now: start)
        for second in stride(from: 10.0, through: 300, by: 10) {
            monitor.heard(at: at(second))
            #expect(monitor.tick(at: at(second + 5)) == .wait)
        }
        #expect(monitor.nextDeadline == at(330))
    }

    @Test func somethingHeardBeforeTheProbeDoesNotCountAsItsAnswer() {
        var monitor = KeepaliveMonitor(policy: policy, now: start)
        #expect(monitor.tick(at: at(30)) == .probe)
        // A late report of an earlier frame must not clear the probe.
        monitor.heard(at: at(20))
        #expect(monitor.isAwaitingAnswer)
        #expect(monitor.tick(at: at(40)) == .timedOut)
    }
}
