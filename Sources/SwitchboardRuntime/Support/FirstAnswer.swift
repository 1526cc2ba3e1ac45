import Foundation

/// The first of several offered values; later offers are refused, so whoever offered a
/// socket or a task that lost the race knows to clean it up. Waiters may come before or after.
public final class FirstAnswer<Value: Sendable>: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Value, Never>])
        case answered(Value)
    }

    private let state = Locked(State.waiting([]))

    /// An answer nobody has offered yet.
    public init() {}

    /// `true` if `value` is the answer.
    public func offer(_ value: Value) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>]? in
            guard case let .waiting(waiters) = state else { return nil }
            state = .answered(value)
            return waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// Whether an answer has been offered: a racer that finds it so has lost, and can stop.
    public var isAnswered: Bool {
        state.withLock { if case .answered = $0 { true } else { false } }
    }

    /// The answer, once one is offered.
    public var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> State in
                    if case var .waiting(waiters) = state {
                        waiters.append(continuation)
                        state = .waiting(waiters)
                    }
                    return state
                }
                if case let .answered(value) = ready { continuation.resume(returning: value) }
            }
        }
    }
}

extension Task where Failure == Never {
    /// Waits for the task's value at most `limit`: the value, or `nil` if the task had not
    /// finished by then (it goes on, neither cancelled nor awaited further).
    package func value(within limit: Duration) async -> Success? {
        let first = FirstAnswer<Success?>()
        let waiter = Task<Void, Never> { _ = first.offer(await self.value) }
        let timer = Task<Void, Never> {
            try? await Task<Never, Never>.sleep(for: limit)
            _ = first.offer(nil)
        }
        let result = await first.value
        waiter.cancel()
        timer.cancel()
        return result
    }
}
