/// At most `capacity` elements; once full, a new one takes the place of the oldest. For the
/// small memories that only save work: a connection's header blocks, validated and measured
/// lists, a gRPC server's methods and request readings, a gRPC client's request lists.
package struct OldestReplacedList<Element> {
    package let capacity: Int
    /// The elements, in no particular order.
    package private(set) var elements: [Element] = []
    private var oldest = 0

    package init(capacity: Int) {
        precondition(capacity > 0, "a list that keeps nothing")
        self.capacity = capacity
    }

    /// Adds `element`, replacing the oldest when full.
    package mutating func insert(_ element: Element) {
        if elements.count < capacity {
            elements.append(element)
        } else {
            elements[oldest] = element
            oldest = (oldest + 1) % capacity
        }
    }
}

extension OldestReplacedList: Sendable where Element: Sendable {}
