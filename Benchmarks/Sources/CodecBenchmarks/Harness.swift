import Foundation

/// A minimal timing harness. Contenders run in alternating rounds, so load from other
/// processes on this shared machine hits them alike, and the median round of each gives
/// ns/op. Results feed a sink so the optimizer cannot drop the work.
struct Harness {
    var budget: Double = 0.2
    var rounds = 9
    nonisolated(unsafe) static var sink = 0

    /// Iterations of `body` that take about `seconds`.
    func calibrate(_ seconds: Double, _ body: () throws -> Int) throws -> Int {
        var iterations = 1
        while true {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<iterations { Self.sink &+= try body() }
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            if elapsed > seconds || iterations > 1 << 26 { return max(1, Int(Double(iterations) * seconds / max(elapsed, 1e-9))) }
            iterations *= 2
        }
    }

    /// Median nanoseconds per call of each body, measured in interleaved rounds.
    func compare(_ bodies: [() throws -> Int]) throws -> [Double] {
        let perRound = try bodies.map { try calibrate(budget / Double(rounds), $0) }
        var samples = Array(repeating: [Double](), count: bodies.count)
        for _ in 0..<rounds {
            for (index, body) in bodies.enumerated() {
                let start = DispatchTime.now().uptimeNanoseconds
                for _ in 0..<perRound[index] { Self.sink &+= try body() }
                samples[index].append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(perRound[index]))
            }
        }
        return samples.map { $0.sorted()[rounds / 2] }
    }

    /// Median nanoseconds per call of `body`.
    func measure(_ body: @escaping () throws -> Int) throws -> Double {
        try compare([body])[0]
    }
}
