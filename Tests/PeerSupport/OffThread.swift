import Foundation

/// Runs blocking socket work on a thread of its own, off the cooperative pool (a blocked pool
/// thread would hold back the very tasks the test waits for).
public func offThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}
