extension SchemaValidator {
    /// Messages embedded inline larger than this many bytes (estimated) are boxed.
    static let inlineSizeLimit = 256

    /// Boxes embedded messages whose inline size would make the containing struct large.
    ///
    /// A chain of messages each embedding the next would otherwise give structs whose
    /// size, copy cost and compile time grow with the chain (a 200-deep chain took the
    /// compiler minutes and gigabytes). Boxed fields cost one pointer inline. Runs after
    /// recursion boxing, so the inline-embedding graph is acyclic here.
    mutating func boxLargeEmbeddedMessages() {
        var size = Array(repeating: -1, count: messages.count)
        for root in messages.indices where size[root] < 0 {
            // Iterative post-order walk: a message's size needs its embedded messages' sizes.
            var stack: [(message: Int, expanded: Bool)] = [(root, false)]
            while let (message, expanded) = stack.popLast() {
                if size[message] >= 0 { continue }
                if !expanded {
                    stack.append((message, true))
                    for field in messages[message].fields where !field.isIndirect {
                        if case let .message(target) = field.shape.valueType, size[target] < 0, !field.shape.isCollection {
                            stack.append((target, false))
                        }
                    }
                    continue
                }
                size[message] = inlineSize(of: message, knownSizes: size)
            }
        }
    }

    /// Estimates a message's inline size, boxing any embedded message over the limit.
    mutating func inlineSize(of message: Int, knownSizes: [Int]) -> Int {
        var total = 8 // unknownFields
        var oneofSizes = Array(repeating: 0, count: messages[message].oneofs.count)
        for index in messages[message].fields.indices {
            let field = messages[message].fields[index]
            var fieldSize: Int
            switch field.shape {
            case .list, .map:
                fieldSize = 8
            case let .singular(type), let .optional(type):
                if case let .message(target) = type, !field.isIndirect {
                    let targetSize = max(knownSizes[target], 0)
                    if targetSize > Self.inlineSizeLimit {
                        messages[message].fields[index].isIndirect = true
                        fieldSize = 8
                    } else {
                        fieldSize = targetSize
                    }
                } else {
                    fieldSize = Self.inlineSize(of: type, isIndirect: field.isIndirect)
                }
                if case .optional = field.shape { fieldSize += 1 }
            }
            if let oneof = field.oneof {
                oneofSizes[oneof] = max(oneofSizes[oneof], fieldSize)
            } else {
                total += fieldSize
            }
        }
        return total + oneofSizes.reduce(0) { $0 + $1 + 1 }
    }

    static func inlineSize(of type: ValueType, isIndirect: Bool) -> Int {
        switch type {
        case let .scalar(scalar):
            switch scalar {
            case .bool: return 1
            case .int32, .uint32, .sint32, .fixed32, .sfixed32, .float: return 4
            case .int64, .uint64, .sint64, .fixed64, .sfixed64, .double: return 8
            case .string, .bytes: return 16
            }
        case .enumeration: return 5
        case .timestamp: return 8
        case .message: return 8
        }
    }
}

extension FieldShape {
    /// Lists and maps store their elements out of line already.
    var isCollection: Bool {
        switch self {
        case .list, .map: return true
        case .singular, .optional: return false
        }
    }
}
