import Foundation

/// A retry budget shared by every call whose ``RetryInterceptor`` holds it: gRPC's retry
/// throttling (gRFC A6, `retryThrottling` in a service config). When a server fails most
/// calls, its clients stop multiplying the load with retries, and start again as calls succeed.
///
/// The budget starts full at ``maximumTokens``. Each attempt that fails in a way worth retrying
/// takes one token; each successful answer (2xx, or gRPC's OK) gives back ``tokenRatio``,
/// up to the maximum. A retry is made only while more than half the maximum is left. The
/// first attempt of a call is never throttled, nor a call retried because it was never sent.
/// Tokens are counted in thousandths, as gRPC counts them, so the ratio has three decimals.
public final class RetryThrottle: Sendable {
    /// Why a throttle cannot be made from the values given.
    public enum ConfigurationError: Error, Equatable, CustomStringConvertible {
        /// `maximumTokens` must be within 1...1000.
        case maximumTokensOutOfRange(Int)
        /// `tokenRatio` must be a finite number of at least 0.001 (what three decimals keep).
        case tokenRatioOutOfRange(Double)

        public var description: String {
            switch self {
            case let .maximumTokensOutOfRange(value): return "retry throttle: maximumTokens must be within 1...1000, not \(value)"
            case let .tokenRatioOutOfRange(value): return "retry throttle: tokenRatio must be at least 0.001 and finite, not \(value)"
            }
        }
    }

    /// The most tokens the budget holds, and what it starts with.
    public let maximumTokens: Int
    /// The tokens a successful answer gives back (to three decimals).
    public let tokenRatio: Double

    private let maximumMilliTokens: Int
    private let milliTokensPerSuccess: Int
    private let milliTokens: Locked<Int>

    /// A full budget of `maximumTokens` (1...1000) that each success refills by `tokenRatio`
    /// (at least 0.001; further decimals are dropped, as gRPC drops them).
    public init(maximumTokens: Int = 10, tokenRatio: Double = 0.1) throws(ConfigurationError) {
        guard (1...1000).contains(maximumTokens) else { throw .maximumTokensOutOfRange(maximumTokens) }
        guard tokenRatio.isFinite, tokenRatio >= 0.001 else { throw .tokenRatioOutOfRange(tokenRatio) }
        self.maximumTokens = maximumTokens
        maximumMilliTokens = maximumTokens * 1000
        // Capped at the budget, so any ratio larger than it refills it in one success.
        milliTokensPerSuccess = Int(min(tokenRatio, Double(maximumTokens)) * 1000)
        self.tokenRatio = Double(milliTokensPerSuccess) / 1000
        milliTokens = Locked(maximumMilliTokens)
    }

    /// The tokens left now.
    public var tokens: Double { Double(milliTokens.current) / 1000 }

    /// Whether a retry would be made now: more than half the maximum is left.
    public var isRetryPermitted: Bool { milliTokens.current > maximumMilliTokens / 2 }

    /// A successful answer: gives back ``tokenRatio``.
    public func recordSuccess() {
        milliTokens.withLock { $0 = min($0 + milliTokensPerSuccess, maximumMilliTokens) }
    }

    /// An attempt that failed in a way worth retrying: takes a token, and tells whether a
    /// retry is still permitted.
    public func recordFailure() -> Bool {
        milliTokens.withLock { tokens in
            tokens = max(tokens - 1000, 0)
            return tokens > maximumMilliTokens / 2
        }
    }
}
