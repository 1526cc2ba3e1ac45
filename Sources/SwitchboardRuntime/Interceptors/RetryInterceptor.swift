import Foundation

/// Retries calls to idempotent endpoints (`idempotent` in the schema) that failed in a way
/// another attempt may fix, waiting as a session waits to reconnect (``RetryBackoff``:
/// (2^n − 1) s ± 20% after the n-th failure) and at least as long as the server's
/// `Retry-After`. Calls to other endpoints are retried only when they were never sent
/// (``TransportError/notConnected``: no connection was up), as gRPC retries transparently:
/// repeating one that may have reached the server could repeat its effect.
///
/// Every attempt runs within the call's one deadline: a retry that would leave less than a
/// second (or less than the last attempt took) after its wait is not made, and the last
/// answer or failure is returned instead.
///
/// With a ``RetryThrottle`` (shared by the interceptors of one server's calls), retries stop
/// while most calls fail, as gRPC's retry throttling stops them.
public struct RetryInterceptor: ClientInterceptor {
    /// When and how often to retry.
    public struct Policy: Sendable, Hashable {
        /// Attempts in all, the first included (3). One turns retrying off.
        public var maximumAttempts: Int
        /// The wait before each retry.
        public var backoff: RetryBackoff
        /// Statuses worth another attempt: 429 and the gateway's 502, 503, 504.
        public var retryableStatuses: Set<Int>
        /// The longest `Retry-After` worth waiting for (60 s); a server asking for more is
        /// answered with its response, for the app to decide.
        public var maximumRetryAfter: Duration
        /// The least time a retry must have before the call's deadline once its wait is over
        /// (1 s; at least what the last attempt took, too); with less, the answer in hand is
        /// returned rather than turned into a timeout.
        public var minimumTimeForRetry: Duration

        /// Creates a policy.
        public init(
            maximumAttempts: Int = 3, backoff: RetryBackoff = RetryBackoff(),
            retryableStatuses: Set<Int> = [429, 502, 503, 504], maximumRetryAfter: Duration = .seconds(60),
            minimumTimeForRetry: Duration = .seconds(1)
        ) {
            self.maximumAttempts = maximumAttempts
            self.backoff = backoff
            self.retryableStatuses = retryableStatuses
            self.maximumRetryAfter = maximumRetryAfter
            self.minimumTimeForRetry = minimumTimeForRetry
        }
    }

    /// The policy in force.
    public let policy: Policy
    /// The retry budget this interceptor draws on, if any (none: every retry the policy
    /// allows is made, as gRPC without `retryThrottling`).
    public let throttle: RetryThrottle?
    let jitter: @Sendable () -> Double
    let sleep: @Sendable (Duration) async throws -> Void

    /// Retries by `policy`, within `throttle`'s budget when there is one (share one throttle
    /// among the interceptors of every call to the same server). `jitter` and `sleep` are for
    /// tests that must not wait.
    public init(
        policy: Policy = Policy(),
        throttle: RetryThrottle? = nil,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: RetryBackoff.jitterRange) },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.policy = policy
        self.throttle = throttle
        self.jitter = jitter
        self.sleep = sleep
    }

    public func intercept(
        _ request: RPCRequest, next: @Sendable (RPCRequest) async throws(TransportError) -> RPCResponse
    ) async throws(TransportError) -> RPCResponse {
        let idempotent = request.endpoint.isIdempotent
        var failures = 0
        while true {
            let outcome: Result<RPCResponse, TransportError>
            let started = ContinuousClock.now
            do {
                outcome = .success(try await next(request))
            } catch {
                outcome = .failure(error)
            }
            failures += 1
            // A retry needs time left after its wait: at least what this attempt took, and
            // the policy's minimum. One that would start just before the deadline would only turn the answer
            // in hand (a 429 with its Retry-After, say) into a timeout.
            let attemptTook = ContinuousClock.now - started
            let condition = retryCondition(after: outcome)
            guard throttlePermits(outcome, retryable: condition != nil), failures < policy.maximumAttempts, idempotent || outcome.neverSent,
                  let condition, let delay = retryDelay(condition, failures: failures),
                  request.deadline.map({ ContinuousClock.now.advanced(by: delay + max(attemptTook, policy.minimumTimeForRetry)) < $0 }) ?? true else {
                return try outcome.get()
            }
            do {
                try await sleep(delay)
            } catch {
                throw .cancelled
            }
            if Task.isCancelled { throw .cancelled }
        }
    }

    /// An outcome worth another attempt, with the wait its server asked for.
    struct RetryCondition {
        let retryAfter: Duration?
    }

    /// Whether `outcome` is worth another attempt, and what wait its server asked for; `nil`
    /// when it is an answer.
    func retryCondition(after outcome: Result<RPCResponse, TransportError>) -> RetryCondition? {
        switch outcome {
        case let .success(response):
            guard policy.retryableStatuses.contains(response.status) else { return nil }
            return RetryCondition(retryAfter: response.retryAfter())
        case let .failure(error):
            switch error {
            // Not after another device took over, or with credentials to refresh.
            case let .disconnected(reason):
                return reason.isRetryable ? RetryCondition(retryAfter: nil) : nil
            case .notConnected: return RetryCondition(retryAfter: nil)
            case let .retryLater(after): return RetryCondition(retryAfter: after)
            // gRPC's UNAVAILABLE is its "try again"; other codes are answers.
            case let .grpcStatus(code, _, _):
                return code == 14 ? RetryCondition(retryAfter: nil) : nil
            // The deadline passed, the caller gave up, or the request itself is at fault.
            case .timeout, .cancelled, .invalidRequest, .unroutable, .notStubbed, .unexpectedResponse,
                 .undecodableResponse, .serverError, .unavailable:
                return nil
            }
        }
    }

    /// The wait before the next attempt, or `nil` when the server asked for more than the
    /// policy waits.
    func retryDelay(_ condition: RetryCondition, failures: Int) -> Duration? {
        // A wait the backoff would cut short (past its `maximumServerDelay`) is no retry either:
        // retrying early would ignore the server (found by review).
        if let retryAfter = condition.retryAfter, retryAfter > min(policy.maximumRetryAfter, policy.backoff.maximumServerDelay) { return nil }
        return policy.backoff.delay(failureCount: failures, jitter: jitter(), floor: condition.retryAfter)
    }

    /// Tells the throttle how the attempt went, as gRPC's retry filter does (a success gives
    /// tokens back, a retryable failure takes one, other answers neither), and whether it
    /// still permits a retry. A call never sent costs the server nothing and is not counted.
    func throttlePermits(_ outcome: Result<RPCResponse, TransportError>, retryable: Bool) -> Bool {
        guard let throttle, !outcome.neverSent else { return true }
        if retryable { return throttle.recordFailure() }
        if case let .success(response) = outcome, (200..<300).contains(response.status) { throttle.recordSuccess() }
        return true
    }
}

extension Result where Success == RPCResponse, Failure == TransportError {
    /// The call failed before anything was sent, so another attempt cannot repeat its effect.
    var neverSent: Bool {
        if case .failure(.notConnected) = self { return true }
        return false
    }
}
