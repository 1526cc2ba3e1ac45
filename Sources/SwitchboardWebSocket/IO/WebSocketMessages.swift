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

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), budget: budget)
    }

    /// Takes messages one at a time; each one taken frees its share of the budget.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<WebSocketMessage>.Iterator
        let budget: InboundBudget

        public mutating func next() async -> WebSocketMessage? {
            guard let message = await base.next() else { return nil }
            budget.release(InboundBudget.cost(of: message))
            return message
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> WebSocketMessage? {
            guard let message = await base.next(isolation: actor) else { return nil }
            budget.release(InboundBudget.cost(of: message))
            return message
        }
    }
}
