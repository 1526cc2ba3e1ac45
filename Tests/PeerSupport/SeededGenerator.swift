import Foundation

/// SplitMix64: a small random generator with a fixed seed, so a randomised test that fails
/// fails the same way again.
///
/// Setting `SWITCHBOARD_TEST_SEED` to a number mixes it into every seed, so a run can explore
/// inputs the fixed seeds never reach; the same value repeats that run.
public struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    /// The number from `SWITCHBOARD_TEST_SEED`, or 0 (the fixed seeds as written).
    public static let variation: UInt64 = ProcessInfo.processInfo.environment["SWITCHBOARD_TEST_SEED"].flatMap { UInt64($0) } ?? 0

    /// A generator starting from `seed` (mixed with ``variation``).
    public init(seed: UInt64) { state = seed ^ Self.variation }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
