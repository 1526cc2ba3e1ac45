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
    let jitter: @Sendable () -> Double
    let sleep: @Sendable (Duration) async throws -> Void

    /// Retries by `policy`. `jitter` and `sleep` are for tests that must not wait.
    public init(
        policy: Policy = Policy(),
        jitter: @escaping @Sendable () -> Double = { Double.random(in: RetryBackoff.jitterRange) },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.policy = policy
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
            guard failures < policy.maximumAttempts, idempotent || outcome.neverSent, let delay = retryDelay(after: outcome, failures: failures),
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

    /// The wait before the next attempt, or `nil` when `outcome` is not worth retrying.
    func retryDelay(after outcome: Result<RPCResponse, TransportError>, failures: Int) -> Duration? {
        let retryAfter: Duration?
        switch outcome {
        case let .success(response):
            guard policy.retryableStatuses.contains(response.status) else { return nil }
            retryAfter = response.retryAfter()
        case let .failure(error):
            switch error {
            // Not after another device took over, or with credentials to refresh.
            case let .disconnected(reason):
                guard reason.isRetryable else { return nil }
                retryAfter = nil
            case .notConnected: retryAfter = nil
            case let .retryLater(after): retryAfter = after
            // gRPC's UNAVAILABLE is its "try again"; other codes are answers.
            case let .grpcStatus(code, _, _):
                guard code == 14 else { return nil }
                retryAfter = nil
            // The deadline passed, the caller gave up, or the request itself is at fault.
            case .timeout, .cancelled, .invalidRequest, .unroutable, .notStubbed, .unexpectedResponse,
                 .undecodableResponse, .serverError, .unavailable:
                return nil
            }
        }
        // A wait the backoff would cut short (past its `maximumServerDelay`) is no retry either:
        // retrying early would ignore the server (found by review).
        if let retryAfter, retryAfter > min(policy.maximumRetryAfter, policy.backoff.maximumServerDelay) { return nil }
        return policy.backoff.delay(failureCount: failures, jitter: jitter(), floor: retryAfter)
    }
}

extension Result where Success == RPCResponse, Failure == TransportError {
    /// The call failed before anything was sent, so another attempt cannot repeat its effect.
    var neverSent: Bool {
        if case .failure(.notConnected) = self { return true }
        return false
    }
}
