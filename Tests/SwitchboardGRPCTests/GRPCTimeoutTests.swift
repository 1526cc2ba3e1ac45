import SwitchboardGRPC
import Testing

/// `grpc-timeout`: at most eight digits and a unit; written rounded up to three significant
/// digits in the coarsest unit that holds them, so a server never sees a shorter deadline
/// than the caller's, and calls with the same deadline send the same text.
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

    @Test func encodingRoundsUpToThreeDigitsInTheCoarsestExactUnit() {
        #expect(GRPCTimeout.encode(.nanoseconds(1500)) == "1500n")
        #expect(GRPCTimeout.encode(.nanoseconds(1501)) == "1510n")
        #expect(GRPCTimeout.encode(.nanoseconds(1_234_567)) == "1240u")
        #expect(GRPCTimeout.encode(.milliseconds(200)) == "200m")
        #expect(GRPCTimeout.encode(.seconds(30)) == "30S")
        #expect(GRPCTimeout.encode(.zero) == "1n")
        // 100.000001 ms: up to 101 ms.
        #expect(GRPCTimeout.encode(.nanoseconds(100_000_001)) == "101m")
        #expect(GRPCTimeout.encode(.nanoseconds(10)) == "10n")
        #expect(GRPCTimeout.encode(.nanoseconds(99_999_999)) == "100m")
        #expect(GRPCTimeout.encode(.nanoseconds(Int64.max)) == "2562048H")
        #expect(GRPCTimeout.encode(.seconds(90)) == "90S")
        #expect(GRPCTimeout.encode(.seconds(120)) == "2M")
        #expect(GRPCTimeout.encode(.seconds(200_000)) == "200000S")
        #expect(GRPCTimeout.encode(.milliseconds(99_999_999)) == "100000S")
        #expect(GRPCTimeout.encode(.seconds(3_000_000_000)) == "50000000M")
        // Whole nanoseconds just past Int64.max once the fraction is added: saturates.
        #expect(GRPCTimeout.encode(.seconds(9_223_372_036) + .nanoseconds(999_999_999)) == "2562048H")
    }

    /// What makes a request's header block repeat: the time a call has left, measured up to
    /// 0.1% of its timeout after its deadline was set, gives the same text.
    @Test(arguments: [(Duration.seconds(60), "1M"), (.seconds(30), "30S"), (.seconds(10), "10S"), (.milliseconds(250), "250m"), (.seconds(5), "5S")])
    func aSteadyDeadlineGivesTheSameText(deadline: Duration, text: String) {
        for elapsed in [Duration.zero, .nanoseconds(1), .microseconds(7), .microseconds(20), deadline / 1001] {
            #expect(GRPCTimeout.encode(deadline - elapsed) == text, "\(deadline) less \(elapsed)")
        }
    }

    /// Never shorter than the caller's time, at most 1% longer, across magnitudes: every
    /// power of ten and its neighbours, and a fixed pseudo-random spread (repeatable).
    @Test func roundingStaysWithinOnePercent() throws {
        var values: [Int64] = []
        var power: Int64 = 1
        for _ in 0...15 {
            values += [power - 1, power, power + 1, power * 9 + power / 2].filter { $0 > 0 }
            power *= 10
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2_000 {
            // xorshift64: the same values on every run.
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            values.append(Int64(state % 9_000_000_000_000_000) + 1)
        }
        for nanoseconds in values {
            let text = GRPCTimeout.encode(.nanoseconds(nanoseconds))
            #expect(text.utf8.count <= 9)
            let decoded = try #require(GRPCTimeout.decode(text))
            let decodedNanoseconds = decoded.components.seconds * 1_000_000_000 + decoded.components.attoseconds / 1_000_000_000
            #expect(decodedNanoseconds >= nanoseconds, "\(nanoseconds) ns gave \(text)")
            #expect(Double(decodedNanoseconds - nanoseconds) <= Double(nanoseconds) / 100, "\(nanoseconds) ns gave \(text)")
        }
    }

    /// The encoder against its definition written out plainly (three significant digits by
    /// decimal arithmetic, units tried coarsest first by division), over every power of ten
    /// and its neighbours, each unit's multiples, and a fixed pseudo-random spread.
    @Test func encodingMatchesItsDefinition() {
        func definition(_ nanoseconds: Int64) -> String {
            let units: [(String, Int64)] = [("H", 3_600_000_000_000), ("M", 60_000_000_000), ("S", 1_000_000_000), ("m", 1_000_000), ("u", 1_000), ("n", 1)]
            // Rounded up to three significant digits, in decimal text.
            let digits = String(nanoseconds)
            var rounded = nanoseconds
            if digits.count > 3 {
                let scale = (0..<(digits.count - 3)).reduce(Int64(1)) { product, _ in product * 10 }
                let (steps, remainder) = nanoseconds.quotientAndRemainder(dividingBy: scale)
                let up = (steps + (remainder == 0 ? 0 : 1)).multipliedReportingOverflow(by: scale)
                rounded = up.overflow ? Int64.max : up.partialValue
            }
            for (unit, size) in units where rounded % size == 0 && rounded / size <= 99_999_999 {
                return "\(rounded / size)\(unit)"
            }
            for (unit, size) in units.reversed() {
                let count = rounded / size + (rounded % size == 0 ? 0 : 1)
                if count <= 99_999_999 { return "\(count)\(unit)" }
            }
            return "99999999H"
        }
        var values: [Int64] = [1, 59, 60, 61, 3_599, 3_600, 3_601, Int64.max, Int64.max - 1]
        var power: Int64 = 1
        for _ in 0...18 {
            values += [power - 1, power, power + 1, power * 3 + power / 7].filter { $0 > 0 && $0 < Int64.max / 4 }
            power = power.multipliedReportingOverflow(by: 10).overflow ? power : power * 10
        }
        for size: Int64 in [1_000, 1_000_000, 1_000_000_000, 60_000_000_000, 3_600_000_000_000] {
            values += ([1, 7, 99, 100, 101, 999, 1_000, 1_001, 99_999, 100_000_000] as [Int64]).compactMap { count in
                let product = count.multipliedReportingOverflow(by: size)
                return product.overflow ? nil : product.partialValue
            }
        }
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        for _ in 0..<5_000 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            // Spread over magnitudes: a random mantissa at a random power of ten.
            let magnitude = Int64(state % 16)
            let scale = (0..<magnitude).reduce(Int64(1)) { product, _ in product * 10 }
            values.append(max(1, Int64((state >> 8) % 1_000) * scale / 100 + Int64(state >> 40) % max(1, scale / 1_000)))
        }
        for nanoseconds in values {
            #expect(GRPCTimeout.encode(.nanoseconds(nanoseconds)) == definition(nanoseconds), "\(nanoseconds) ns")
        }
    }
}
