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
