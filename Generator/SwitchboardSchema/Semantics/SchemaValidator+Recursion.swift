extension SchemaValidator {
    /// Marks fields that close a reference cycle as indirect, so the Swift struct can hold them.
    /// Every cycle is legal, as in protobuf: a field that is never absent gets a box that makes
    /// its default on read (its storage is optional), so no default value is infinite.
    mutating func checkRecursion() {
        // Embedding edges: any non-collection message field; these need a box to form a cycle.
        var embedding: [[(target: Int, field: Int)]] = Array(repeating: [], count: messages.count)
        for (index, message) in messages.enumerated() {
            for (fieldIndex, field) in message.fields.enumerated() {
                switch field.shape {
                case let .singular(.message(target)), let .optional(.message(target)):
                    embedding[index].append((target, fieldIndex))
                default:
                    break
                }
            }
        }

        // Box every edge inside a strongly connected component.
        let component = stronglyConnectedComponents(embedding)
        for (index, edges) in embedding.enumerated() {
            for edge in edges where component[edge.target] == component[index] {
                messages[index].fields[edge.field].isIndirect = true
            }
        }
    }

    /// Tarjan's algorithm, iterative so deep schemas cannot overflow the stack.
    func stronglyConnectedComponents(_ graph: [[(target: Int, field: Int)]]) -> [Int] {
        let count = graph.count
        var index = Array(repeating: -1, count: count)
        var low = Array(repeating: 0, count: count)
        var onStack = Array(repeating: false, count: count)
        var component = Array(repeating: -1, count: count)
        var stack: [Int] = []
        var nextIndex = 0
        var nextComponent = 0
        for root in 0..<count where index[root] == -1 {
            var work: [(node: Int, edge: Int)] = [(root, 0)]
            index[root] = nextIndex; low[root] = nextIndex; nextIndex += 1
            stack.append(root); onStack[root] = true
            while let (node, edge) = work.last {
                if edge < graph[node].count {
                    work[work.count - 1].edge += 1
                    let target = graph[node][edge].target
                    if index[target] == -1 {
                        index[target] = nextIndex; low[target] = nextIndex; nextIndex += 1
                        stack.append(target); onStack[target] = true
                        work.append((target, 0))
                    } else if onStack[target] {
                        low[node] = min(low[node], index[target])
                    }
                } else {
                    work.removeLast()
                    if let parent = work.last { low[parent.node] = min(low[parent.node], low[node]) }
                    if low[node] == index[node] {
                        while let member = stack.popLast() {
                            onStack[member] = false
                            component[member] = nextComponent
                            if member == node { break }
                        }
                        nextComponent += 1
                    }
                }
            }
        }
        return component
    }
}
