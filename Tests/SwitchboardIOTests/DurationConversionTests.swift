@testable import SwitchboardIO
import Testing

/// Configured timeouts reach `poll` and Dispatch saturated, never as an overflow trap.
@Suite struct DurationConversionTests {
    @Test func pollMillisecondsRoundUpAndSaturate() {
        #expect(Duration.zero.pollMilliseconds == 0)
        #expect(Duration.microseconds(1).pollMilliseconds == 1)
        #expect(Duration.milliseconds(1500).pollMilliseconds == 1500)
        #expect(Duration.seconds(-3).pollMilliseconds == 0)
        #expect(Duration.seconds(Int64.max).pollMilliseconds == .max)
        #expect(Duration.seconds(3_000_000).pollMilliseconds == .max)
    }

    @Test func nanosecondsSaturate() {
        #expect(Duration.seconds(2).saturatingNanoseconds == 2_000_000_000)
        #expect(Duration.nanoseconds(7).saturatingNanoseconds == 7)
        #expect(Duration.seconds(-1).saturatingNanoseconds == 0)
        #expect(Duration.seconds(Int64.max).saturatingNanoseconds == .max)
    }
}
