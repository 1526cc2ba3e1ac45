import Foundation

/// How long each caller of a round keeps calling.
public enum Span: Sendable {
    /// A fixed number of calls each (for CPU per call and for profiles).
    case calls(Int)
    /// Every caller starts at one instant and calls until the window closes; only calls that
    /// begin inside the measured part count. The number in flight is then the same all
    /// through the measurement: no ramp-up while callers start, and no tail in which the
    /// callers that finished early leave the rest an idle machine.
    case window(warmUp: Double, measured: Double)

    /// The instants of this round, on `now()`'s clock, for a windowed span.
    public func window() -> Window? {
        guard case let .window(warmUp, measured) = self else { return nil }
        return Window(warmUp: warmUp, measured: measured)
    }
}

/// The instants of a windowed round.
public struct Window: Sendable {
    public let start: UInt64, measureFrom: UInt64, stop: UInt64

    /// Starts 50 ms from now, so every caller can get ready first.
    public init(warmUp: Double, measured: Double) {
        start = now() + 50_000_000
        measureFrom = start + UInt64(warmUp * 1e9)
        stop = measureFrom + UInt64(measured * 1e9)
    }

    /// The measured part's length.
    public var seconds: Double { Double(stop - measureFrom) / 1e9 }

    /// Blocks a thread until the start.
    public func waitForStart() {
        let current = now()
        if current < start { usleep(UInt32((start - current) / 1000)) }
    }

    /// Suspends a task until the start.
    public func startAfterSleeping() async {
        let current = now()
        if current < start { try? await Task.sleep(nanoseconds: start - current) }
    }
}

/// Calls `call` serially from one task per entry of `callers` (each on its executor, if it
/// names one) for `span`, and times each call that succeeds; `call` says whether it did.
public func closedLoop<Caller: Sendable>(_ callers: [(caller: Caller, executor: (any TaskExecutor)?)], span: Span,
                                         call: @escaping @Sendable (Caller) async -> Bool) async -> Run {
    let window = span.window()
    let start = now()
    let (latencies, failures) = await withTaskGroup(of: ([Double], Int).self) { group in
        for (caller, executor) in callers {
            group.addTask(executorPreference: executor) {
                var samples: [Double] = []
                var failed = 0
                func once() async {
                    let begin = now()
                    let succeeded = await call(caller)
                    guard begin >= window?.measureFrom ?? 0 else { return }
                    if succeeded { samples.append(Double(now() - begin)) } else { failed += 1 }
                }
                switch span {
                case let .calls(count):
                    samples.reserveCapacity(count)
                    for _ in 0..<count { await once() }
                case .window:
                    await window?.startAfterSleeping()
                    while now() < window?.stop ?? 0 { await once() }
                }
                return (samples, failed)
            }
        }
        var all: [Double] = []
        var failed = 0
        for await (samples, count) in group {
            all += samples
            failed += count
        }
        return (all, failed)
    }
    return Run(latencies: latencies, failures: failures, seconds: window?.seconds ?? Double(now() - start) / 1e9)
}
