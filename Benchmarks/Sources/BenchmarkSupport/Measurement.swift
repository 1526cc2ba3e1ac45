import Foundation

// What every latency benchmark here shares: the clock, percentiles, one round's results and
// the pick of the median round, so the benchmarks report alike.

/// Monotonic nanoseconds.
public func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// The `p` quantile (0...1) of `samples`, nearest rank; NaN when there are none.
public func percentile(_ samples: [Double], _ p: Double) -> Double {
    let sorted = samples.sorted()
    return sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

/// One timed round: each call's latency in nanoseconds, the calls that failed, and the wall time.
public struct Run: Sendable {
    public var latencies: [Double]
    public var failures: Int
    public var seconds: Double
    /// Completed calls per second.
    public var rate: Double { Double(latencies.count) / seconds }

    public init(latencies: [Double], failures: Int = 0, seconds: Double) {
        self.latencies = latencies
        self.failures = failures
        self.seconds = seconds
    }
}

/// The round whose median latency is the median of the rounds' medians.
public func medianRound(_ runs: [Run]) -> Run {
    runs.sorted { percentile($0.latencies, 0.5) < percentile($1.latencies, 0.5) }[runs.count / 2]
}

/// Nanoseconds as microseconds with one decimal.
public func microseconds(_ nanoseconds: Double) -> String { String(format: "%.1f µs", nanoseconds / 1000) }
