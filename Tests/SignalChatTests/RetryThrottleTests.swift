import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// gRPC's retry throttling: one budget for every call to a server, which stops retries while
/// most calls fail and lets them again as calls succeed (gRFC A6).
@Suite struct RetryThrottleTests {
    typealias Scripted = RetryInterceptorTests.Scripted<Unauthenticated>
    typealias Sleeps = RetryInterceptorTests.Sleeps

    @Test func aFailureTakesATokenASuccessGivesBackTheRatioAndRetriesNeedMoreThanHalf() throws {
        let throttle = try RetryThrottle(maximumTokens: 4, tokenRatio: 1.6)
        #expect(throttle.tokens == 4)
        #expect(throttle.recordFailure())  // 3 > 2
        throttle.recordSuccess()  // 4.6, capped at 4
        #expect(throttle.tokens == 4)
        #expect(throttle.recordFailure())  // 3
        #expect(!throttle.recordFailure())  // 2: at half, not above it
        #expect(!throttle.isRetryPermitted)
        throttle.recordSuccess()  // 3.6
        #expect(throttle.tokens == 3.6)
        #expect(throttle.isRetryPermitted)
        #expect(throttle.recordFailure())  // 2.6
        #expect(!throttle.recordFailure())  // 1.6
        #expect(!throttle.recordFailure())  // 0.6
        #expect(!throttle.recordFailure())  // 0, never below
        #expect(throttle.tokens == 0)
    }

    @Test func theRatioKeepsThreeDecimals() throws {
        let throttle = try RetryThrottle(maximumTokens: 2, tokenRatio: 0.0019)
        #expect(throttle.tokenRatio == 0.001)
        _ = throttle.recordFailure()
        throttle.recordSuccess()
        #expect(throttle.tokens == 1.001)
    }

    @Test(arguments: [0, -1, 1001])
    func aMaximumOutsideOneToAThousandIsRefused(maximum: Int) {
        #expect(throws: RetryThrottle.ConfigurationError.maximumTokensOutOfRange(maximum)) { try RetryThrottle(maximumTokens: maximum) }
    }

    @Test(arguments: [0, 0.0009, -1, .infinity])
    func aRatioBelowOneThousandthOrNotFiniteIsRefused(ratio: Double) {
        #expect(throws: RetryThrottle.ConfigurationError.tokenRatioOutOfRange(ratio)) { try RetryThrottle(tokenRatio: ratio) }
    }

    @Test func aNaNRatioIsRefused() {
        #expect(throws: RetryThrottle.ConfigurationError.self) { try RetryThrottle(tokenRatio: .nan) }
    }

    let lookUp = LookUpUsernameHashRequest(hash: Data([1]))
    let options = CallOptions(timeout: .seconds(300))

    func client(_ transport: Scripted, _ throttle: RetryThrottle, _ sleeps: Sleeps) -> UsernamesClient {
        UsernamesClient(transport: transport, interceptors: [RetryInterceptor(throttle: throttle, jitter: { 1.0 }, sleep: sleeps.sleep)])
    }

    @Test func callsSharingAThrottleStopRetryingWhileTheServerFailsAndStartAgainAfterSuccesses() async throws {
        let throttle = try RetryThrottle(maximumTokens: 4, tokenRatio: 1)
        let unavailable = RetryInterceptorTests.status(503)
        let sleeps = Sleeps()
        // The policy allows three attempts; the budget stops the second call's second one.
        let first = Scripted([.success(unavailable), .success(unavailable), .success(unavailable)])
        _ = await client(first, throttle, sleeps).lookUpUsernameHash(lookUp, options: options)
        #expect(first.attempts.withLock { $0 } == 2, "4 → 3 retried, 3 → 2 not")
        let second = Scripted([.success(unavailable), .success(RetryInterceptorTests.found)])
        let refused = await client(second, throttle, sleeps).lookUpUsernameHash(lookUp, options: options)
        #expect(second.attempts.withLock { $0 } == 1, "a throttled call returns its first answer")
        #expect(refused.value == nil)
        #expect(throttle.tokens == 1)
        // Successes refill the budget: three bring it back to 4, and a failing call retries again.
        for _ in 0..<3 {
            let succeeding = Scripted([.success(RetryInterceptorTests.found)])
            #expect(await client(succeeding, throttle, sleeps).lookUpUsernameHash(lookUp, options: options).value?.uuid == "aci-1")
        }
        #expect(throttle.tokens == 4)
        let third = Scripted([.success(unavailable), .success(RetryInterceptorTests.found)])
        let retried = await client(third, throttle, sleeps).lookUpUsernameHash(lookUp, options: options)
        #expect(retried.value?.uuid == "aci-1")
        #expect(third.attempts.withLock { $0 } == 2)
        // The retried call's failure took one token and its success gave one back.
        #expect(throttle.tokens == 4)
    }

    @Test func answersThatAreNotWorthRetryingLeaveTheBudgetAlone() async throws {
        let throttle = try RetryThrottle(maximumTokens: 4, tokenRatio: 1)
        _ = throttle.recordFailure()
        let sleeps = Sleeps()
        let notFound = Scripted([.success(RetryInterceptorTests.status(404))])
        _ = await client(notFound, throttle, sleeps).lookUpUsernameHash(lookUp, options: options)
        #expect(throttle.tokens == 3)
    }

    @Test func aCallNeverSentIsNotCountedAgainstTheBudget() async throws {
        let throttle = try RetryThrottle(maximumTokens: 4, tokenRatio: 1)
        _ = throttle.recordFailure()
        _ = throttle.recordFailure()
        // At half: no retry of a sent call would be made, but one never sent still is.
        let sleeps = Sleeps()
        let transport = Scripted([.failure(.notConnected), .success(RetryInterceptorTests.found)])
        let result = await client(transport, throttle, sleeps).lookUpUsernameHash(lookUp, options: options)
        #expect(result.value?.uuid == "aci-1")
        #expect(transport.attempts.withLock { $0 } == 2)
        #expect(throttle.tokens == 3, "only the success counted")
    }
}
