import Foundation

extension Array where Element: Sendable {
    /// `map` on every core: each element's result goes to its own slot, so the output is in
    /// order whatever order the work finishes in (generation stays deterministic). The work
    /// runs on ``DeepStack`` threads, one per core, each taking the next element in turn.
    package func concurrentMap<Result: Sendable>(_ transform: @escaping @Sendable (Element) -> Result) -> [Result] {
        guard !isEmpty else { return [] }
        let slots = Slots<Result>(count: count)
        defer { slots.deallocate() }
        let elements = self
        let next = NextIndex()
        let threads = Swift.min(count, Swift.max(1, ProcessInfo.processInfo.activeProcessorCount))
        let work = DeepStack.UncheckedWork {
            while let index = next.take(below: elements.count) {
                slots.store(transform(elements[index]), at: index)
            }
        }
        DeepStack.start([DeepStack.UncheckedWork](repeating: work, count: threads))
        return slots.collect()
    }
}

/// The next element no thread has taken yet.
private final class NextIndex: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0

    func take(below count: Int) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        guard next < count else { return nil }
        next += 1
        return next - 1
    }
}

/// One slot per result, each written by exactly one thread; read once all have finished
/// (``DeepStack/start(_:)`` returns after them), so no lock is needed.
private struct Slots<Value>: @unchecked Sendable {
    let slots: UnsafeMutableBufferPointer<Value>
    let count: Int

    init(count: Int) {
        self.count = count
        slots = .allocate(capacity: Swift.max(count, 1))
    }

    func store(_ value: Value, at index: Int) {
        (slots.baseAddress! + index).initialize(to: value)
    }

    /// Moves the values out, in order; the slots are empty afterwards.
    func collect() -> [Value] {
        (0..<count).map { (slots.baseAddress! + $0).move() }
    }

    func deallocate() { slots.deallocate() }
}
