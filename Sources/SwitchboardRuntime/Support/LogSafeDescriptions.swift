import Foundation

// Requests, responses and headers describe themselves, under `print`, `dump` and `Mirror`
// alike, without their secrets: header values by LogRedaction's rule, bodies as sizes, and
// paths in their log-safe form (a client's ``RPCRequest/logSafePath``) or not at all (a
// server's request, whose path may hold any value the client put there).

extension RPCHeaders: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `[name: value, ...]`, secret values redacted.
    public var description: String {
        "[" + fields.map { LogRedaction.header($0.name, $0.value) }.joined(separator: ", ") + "]"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: fields.map { (label: $0.name, value: LogRedaction.showsValue(ofHeader: $0.name) ? $0.value : LogRedaction.placeholder) },
               displayStyle: .dictionary)
    }
}

extension RPCRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The verb and log-safe path, headers redacted, the body's size.
    public var description: String {
        "RPCRequest(\(verb) \(logSafePath), headers: \(headers), body: \(body.map { LogRedaction.body($0.count) } ?? "none"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["rpcName": endpoint.rpcName, "verb": verb, "path": logSafePath, "headers": headers,
                                "body": body.map { LogRedaction.body($0.count) } ?? "none", "deadline": deadline as Any],
               displayStyle: .struct)
    }
}

extension RPCResponse: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The status and reason, headers redacted, the body's size.
    public var description: String {
        "RPCResponse(\(status)\(message.map { " \($0)" } ?? ""), headers: \(headers), body: \(LogRedaction.body(body.count)))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["status": status, "message": message as Any, "headers": headers, "body": LogRedaction.body(body.count)],
               displayStyle: .struct)
    }
}

extension ServerRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The verb, the path's size only (it may carry sensitive path parameters or a query),
    /// headers redacted, the body's size.
    public var description: String {
        "ServerRequest(\(verb), path: \(path.utf8.count) bytes, headers: \(headers), body: \(body.map { LogRedaction.body($0.count) } ?? "none"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["verb": verb, "path": "\(path.utf8.count) bytes", "headers": headers,
                                "body": body.map { LogRedaction.body($0.count) } ?? "none"],
               displayStyle: .struct)
    }
}

extension ServerContext: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The authentication, headers redacted, and parameter names without their values.
    public var description: String {
        "ServerContext(\(auth), headers: \(headers), path parameters: \(pathParameters.keys.sorted()), query: \(query.map(\.name))"
            + (endpoint.map { ", endpoint: \($0.rpcName))" } ?? ")")
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["auth": auth, "headers": headers, "pathParameters": pathParameters.keys.sorted(), "query": query.map(\.name),
                                "endpoint": endpoint?.rpcName as Any],
               displayStyle: .struct)
    }
}

extension FakeServerTransport.IncomingRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// As ``RPCRequest``'s: the log-safe path, headers redacted, the body's size.
    public var description: String {
        "IncomingRequest(#\(id) \(verb) \(logSafePath), headers: \(headers), body: \(body.map { LogRedaction.body($0.count) } ?? "none"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "rpcName": endpoint.rpcName, "verb": verb, "path": logSafePath, "headers": headers,
                                "body": body.map { LogRedaction.body($0.count) } ?? "none"],
               displayStyle: .struct)
    }
}
