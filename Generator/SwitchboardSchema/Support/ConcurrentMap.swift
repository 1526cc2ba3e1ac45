import Dispatch

extension Array where Element: Sendable {
    /// `map` on every core: each element's result goes to its own slot, so the output is in
    /// order whatever order the work finishes in (generation stays deterministic).
    package func concurrentMap<Result: Sendable>(_ transform: @Sendable (Element) -> Result) -> [Result] {
        let slots = Slots<Result>(count: count)
        defer { slots.deallocate() }
        let elements = self
        DispatchQueue.concurrentPerform(iterations: count) { index in
            slots.store(transform(elements[index]), at: index)
        }
        return slots.collect()
    }
}

/// One slot per result, each written by exactly one task; read once all have finished
/// (`concurrentPerform` returns after them), so no lock is needed.
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
