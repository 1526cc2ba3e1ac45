import SwitchboardGRPC
import Testing

/// `grpc-timeout`: at most eight digits and a unit; written in the finest unit that fits,
/// rounded up, so a server never sees a shorter deadline than the caller's.
@Suite struct GRPCTimeoutTests {
    @Test(arguments: [
        ("1n", Duration.nanoseconds(1)), ("250u", .microseconds(250)), ("30000m", .seconds(30)), ("7S", .seconds(7)),
        ("2M", .seconds(120)), ("1H", .seconds(3600)), ("99999999H", .nanoseconds(Int64.max)) /* past Int64 nanoseconds: saturates */, ("00000005m", .milliseconds(5)),
    ])
    func validValuesDecode(text: String, expected: Duration) {
        #expect(GRPCTimeout.decode(text) == expected)
    }

    @Test(arguments: ["", "m", "5", "123456789m", "1x", "-1m", "+1m", "1 m", " 1m", "1.5S", "1h", "\u{661}m", "1m\u{301}"])
    func invalidValuesAreRefused(text: String) {
        #expect(GRPCTimeout.decode(text) == nil)
    }

    @Test(arguments: [Duration.nanoseconds(1), .microseconds(1500), .seconds(30), .seconds(1_000_000), .milliseconds(99_999_999_999)])
    func encodedValuesDecodeToAtLeastTheDuration(duration: Duration) throws {
        let text = GRPCTimeout.encode(duration)
        #expect(text.utf8.count <= 9)
        let decoded = try #require(GRPCTimeout.decode(text))
        #expect(decoded >= duration)
    }

    @Test func encodingPicksTheFinestUnitThatFits() {
        #expect(GRPCTimeout.encode(.nanoseconds(1500)) == "1500n")
        #expect(GRPCTimeout.encode(.milliseconds(200)) == "200000u")
        #expect(GRPCTimeout.encode(.seconds(30)) == "30000000u")
        #expect(GRPCTimeout.encode(.zero) == "1n")
        #expect(GRPCTimeout.encode(.nanoseconds(100_000_001)) == "100001u")
        #expect(GRPCTimeout.encode(.nanoseconds(10)) == "10n")
        #expect(GRPCTimeout.encode(.nanoseconds(99_999_999)) == "99999999n")
        #expect(GRPCTimeout.encode(.nanoseconds(Int64.max)) == "2562048H")
        #expect(GRPCTimeout.encode(.seconds(90)) == "90000000u")
        #expect(GRPCTimeout.encode(.seconds(200_000)) == "200000S")
        #expect(GRPCTimeout.encode(.milliseconds(99_999_999)) == "99999999m")
        #expect(GRPCTimeout.encode(.seconds(3_000_000_000)) == "50000000M")
        // Whole nanoseconds just past Int64.max once the fraction is added: saturates.
        #expect(GRPCTimeout.encode(.seconds(9_223_372_036) + .nanoseconds(999_999_999)) == "2562048H")
    }
}
