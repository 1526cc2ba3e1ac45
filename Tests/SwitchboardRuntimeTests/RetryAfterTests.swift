import Foundation
import SwitchboardRuntime
import Testing

/// `Retry-After` read from a response: seconds or an HTTP date, never more than
/// `RPCResponse.maximumRetryAfter`, so that a deadline made from it stays within what clocks
/// and `Task.sleep` accept.
@Suite struct RetryAfterTests {
    static func response(_ value: String) -> RPCResponse {
        RPCResponse(status: 429, headers: ["Retry-After": value])
    }

    @Test func secondsAndDatesAreRead() {
        #expect(Self.response("30").retryAfter() == .seconds(30))
        #expect(Self.response(" 0 ").retryAfter() == .zero)
        let now = Date(timeIntervalSince1970: 1_445_412_400)  // Wed, 21 Oct 2015 07:26:40 GMT
        #expect(Self.response("Wed, 21 Oct 2015 07:28:00 GMT").retryAfter(now: now) == .seconds(80))
        #expect(Self.response("soon").retryAfter() == nil)
        #expect(Self.response("-5").retryAfter() == nil)
    }

    /// RFC 9110 (section 5.6.7) has a recipient accept the obsolete RFC 850 and asctime
    /// forms as well as IMF-fixdate.
    @Test func obsoleteDateFormsAreRead() {
        let now = Date(timeIntervalSince1970: 784_111_717)  // Sun, 06 Nov 1994 08:48:37 GMT
        #expect(Self.response("Sun, 06 Nov 1994 08:49:37 GMT").retryAfter(now: now) == .seconds(60))
        #expect(Self.response("Sunday, 06-Nov-94 08:49:37 GMT").retryAfter(now: now) == .seconds(60))
        #expect(Self.response("Sun Nov  6 08:49:37 1994").retryAfter(now: now) == .seconds(60))
        #expect(Self.response("Sun Nov 16 08:49:37 1994").retryAfter(now: now) == .seconds(60 + 10 * 86400))
        // Malformed variants of each form are not dates.
        for value in ["Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST", "Sunday, 06-Nov-1994 08:49:37 GMT",
                      "Sun Nov 6 08:49:37 1994", "Sun Nov  6 08:49:37 1994 GMT", "Sun, 31 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT"] {
            #expect(Self.response(value).retryAfter(now: now) == nil, "\(value)")
        }
    }

    /// An RFC 850 date's two-digit year is the one at most 50 years after now (RFC 9110):
    /// a date that would be further on is the century before.
    @Test func anRFC850YearMoreThanFiftyYearsOnIsTheCenturyBefore() {
        let now = Date(timeIntervalSince1970: 1_445_412_400)  // Wed, 21 Oct 2015 07:26:40 GMT
        #expect(Self.response("Wednesday, 21-Oct-15 07:28:00 GMT").retryAfter(now: now) == .seconds(80))
        // 2065-10-21 is exactly 50 years on (13 leap days between): still ahead.
        #expect(Self.response("Wednesday, 21-Oct-65 07:26:40 GMT").retryAfter(now: now) == .seconds((50 * 365 + 13) * 86400))
        // 2066 would be more than 50 years on: 1966, in the past.
        #expect(Self.response("Thursday, 21-Oct-66 07:26:40 GMT").retryAfter(now: now) == .zero)
        // One second past the 50 years is the century before too.
        #expect(Self.response("Wednesday, 21-Oct-65 07:26:41 GMT").retryAfter(now: now) == .zero)
    }

    /// A hostile or broken server's huge value is held to the maximum, which a clock can
    /// still add to now and sleep until.
    @Test func hugeValuesAreHeldToTheMaximum() async throws {
        for value in ["9223372036854775807", "99999999999999999999999", "\(Int32.max)0", "Fri, 31 Dec 9999 23:59:59 GMT"] {
            #expect(Self.response(value).retryAfter() == RPCResponse.maximumRetryAfter, "\(value)")
        }
        #expect(Self.response("\(Int32.max)").retryAfter() == RPCResponse.maximumRetryAfter)
        // The deadline it makes is one the clock can sleep until (cancelled at once).
        let deadline = ContinuousClock.now.advanced(by: try #require(Self.response("9223372036854775807").retryAfter()))
        let sleeper = Task { try await ContinuousClock().sleep(until: deadline) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
    }
}
