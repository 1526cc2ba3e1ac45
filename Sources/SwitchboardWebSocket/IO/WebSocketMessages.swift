import Foundation
import SwitchboardIO
/// The messages a connection received, in order, as an `AsyncSequence` that ends when the
/// connection does.
///
/// Reading is backpressured: when the messages received but not yet taken from here pass
/// ``WebSocketConnection/Options/maximumBufferedBytes``, the connection stops reading the
/// socket (TCP then slows the peer) until the application has taken half of them.
public struct WebSocketMessages: AsyncSequence, Sendable {
    public typealias Element = WebSocketMessage

    let stream: AsyncStream<WebSocketMessage>
    let budget: InboundBudget
    let drained: DrainSignal

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), budget: budget, drained: drained)
    }

    /// Takes messages one at a time; each one taken frees its share of the budget.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<WebSocketMessage>.Iterator
        let budget: InboundBudget
        let drained: DrainSignal

        public mutating func next() async -> WebSocketMessage? {
            budget.readerWaits()
            let next = await base.next()
            budget.readerWoke()
            guard let message = next else {
                drained.fire()
                return nil
            }
            budget.release(InboundBudget.cost(of: message))
            return message
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> WebSocketMessage? {
            budget.readerWaits()
            let next = await base.next(isolation: actor)
            budget.readerWoke()
            guard let message = next else {
                drained.fire()
                return nil
            }
            budget.release(InboundBudget.cost(of: message))
            return message
        }
    }
}

/// Fires once the application has asked for a message past the last one: it is done with
/// everything delivered, including whatever it sent in answer, so the connection may close.
final class DrainSignal: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private var hasFired = false
    private var actions: [@Sendable () -> Void] = []

    func fire() {
        let due: [@Sendable () -> Void] = lock.withLock {
            guard !hasFired else { return [] }
            hasFired = true
            defer { actions = [] }
            return actions
        }
        for action in due { action() }
    }

    /// Runs `action` when the signal fires, or now if it has.
    func whenFired(_ action: @escaping @Sendable () -> Void) {
        let now: Bool = lock.withLock {
            if hasFired { return true }
            actions.append(action)
            return false
        }
        if now { action() }
    }
}
