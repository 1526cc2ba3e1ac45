import Foundation
import SwitchboardRuntime
import SwitchboardSchema

/// One endpoint of a schema read at run time: builds requests from JSON the way the
/// generated client builds them from its types (same path, query, header and body
/// bindings), and reads responses the way its typed result does (leniently: JSON members
/// and enum names the schema does not know are skipped, as generated clients skip them).
public struct DynamicEndpoint: Sendable {
    public let schema: Schema
    public let service: ServiceDefinition
    public let endpoint: EndpointDefinition

    /// What came back, in the terms of the endpoint's declared result.
    public enum Outcome: Sendable, Hashable {
        /// 2xx, with the decoded response when the endpoint returns one.
        case success(DynamicMessage?)
        /// A status the endpoint declares, such as `notFound`, with its decoded body.
        case declaredError(name: String, status: Int, body: DynamicMessage?, retryAfter: Duration?)
        /// A status the endpoint does not declare.
        case undeclaredStatus(Int, body: Data)
    }

    /// The endpoint `endpoint` of `service`, both of `schema`.
    public init(schema: Schema, service: ServiceDefinition, endpoint: EndpointDefinition) {
        self.schema = schema
        self.service = service
        self.endpoint = endpoint
    }

    /// Finds `Service.endpoint` (Swift or schema names) or an rpc name `pkg.Service/Endpoint`.
    public init(schema: Schema, name: String) throws(DynamicCodecError) {
        self.schema = schema
        let parts: [Substring] = name.contains("/") ? name.split(separator: "/") : name.split(separator: ".", maxSplits: 1)
        for service in schema.services {
            for endpoint in service.endpoints {
                let dotted = parts.count == 2 && (service.name == parts[0] || service.fullName == parts[0])
                    && (endpoint.name == parts[1] || endpoint.swiftName == parts[1])
                if dotted || endpoint.rpcName == name {
                    self.service = service
                    self.endpoint = endpoint
                    return
                }
            }
        }
        let known = schema.services.flatMap { service in service.endpoints.map { "\(service.name).\($0.name)" } }
        throw DynamicCodecError("no endpoint '\(name)'; the schema has: \(known.joined(separator: ", "))")
    }

    /// The runtime descriptor, as the generated code declares it.
    public var descriptor: EndpointDescriptor {
        EndpointDescriptor(rpcName: endpoint.rpcName, verb: endpoint.verb, pathTemplate: endpoint.runtimePathTemplate,
                           auth: service.auth == .account ? .account : .none, isIdempotent: endpoint.isIdempotent,
                           defaultTimeout: endpoint.timeoutMilliseconds.map { .milliseconds($0) }, isDeprecated: endpoint.isDeprecated,
                           errorStatusByGRPCCode: endpoint.errorStatusByGRPCCode, versions: endpoint.versions,
                           encoding: endpoint.encoding == .json ? .json : .protobuf)
    }

    /// Whether the endpoint needs an authenticated connection.
    public var requiresAccount: Bool { service.auth == .account }

    /// The body encoding the service declares.
    public var encoding: BodyEncoding { endpoint.encoding == .json ? .json : .protobuf }

    /// The per-request keys this endpoint takes, such as `accessKey`.
    public var keyNames: [String] { endpoint.keys.map { schema.keys[$0].name } }

    /// Builds the request from a JSON object of the request message's fields. `keys` gives
    /// each per-request key by schema name, already in header form (base64 for binary keys).
    public func request(fromJSON json: Data, keys: [String: String] = [:]) throws(DynamicCodecError) -> RPCRequest {
        var message: DynamicMessage?
        if let type = endpoint.request {
            let text = json.isEmpty ? Data("{}".utf8) : json
            message = try DynamicJSONCodec(schema: schema).decode(text, as: type)
        } else if !json.isEmpty, String(decoding: json, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) != "{}" {
            throw DynamicCodecError("\(service.name).\(endpoint.name) takes no request fields")
        }
        return try request(from: message, keys: keys)
    }

    /// Builds the request from a message of the request type.
    public func request(from message: DynamicMessage?, keys: [String: String] = [:]) throws(DynamicCodecError) -> RPCRequest {
        var message = message
        var bound = Set<Int>()
        var path = ""
        // The same path for logs, with `@sensitive` values redacted as generated clients do.
        var logSafe = ""
        // The path: each `{name[:encoding]}` in template order takes the next path binding.
        let template = endpoint.pathTemplate.split(separator: "?", maxSplits: 1).first.map(String.init) ?? endpoint.pathTemplate
        var bindings = endpoint.pathParameters.makeIterator()
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            path += rest[..<open]
            logSafe += rest[..<open]
            guard let binding = bindings.next() else { throw DynamicCodecError("path template \(template) has more slots than bindings") }
            let field = try requestField(binding.field)
            bound.insert(field.number)
            let text = try parameterText(message, field: field, encoding: binding.encoding, required: true) ?? ""
            // A dot-segment, which URL normalisation turns into another resource: generated
            // clients fail such a call with `invalidRequest` before sending (`RPCCall.send`).
            if text == "." || text == ".." {
                throw DynamicCodecError("'\(field.jsonName)' cannot be '\(text)' in the path: it would reach another resource")
            }
            // An empty segment, which routers refuse or read as another path (`RPCCall.send` too).
            if text.isEmpty { throw DynamicCodecError("'\(field.jsonName)' cannot be empty in the path") }
            path += text
            logSafe += field.isSensitive ? LogRedaction.placeholder : text
            rest = rest[rest.index(after: close)...]
        }
        path += rest
        logSafe += rest
        var query: [String] = []
        var logSafeQuery: [String] = []
        for binding in endpoint.queryParameters {
            let field = try requestField(binding.field)
            bound.insert(field.number)
            if let text = try parameterText(message, field: field, encoding: binding.encoding, required: false) {
                query.append(binding.name + "=" + text)
                logSafeQuery.append(binding.name + "=" + (field.isSensitive ? LogRedaction.placeholder : text))
            }
        }
        if !query.isEmpty {
            path += "?" + query.joined(separator: "&")
            logSafe += "?" + logSafeQuery.joined(separator: "&")
        }

        var headers = RPCHeaders()
        headers.add("Accept", encoding.contentType)
        for binding in endpoint.headers {
            let field = try requestField(binding.field)
            bound.insert(field.number)
            if let text = try rawParameterText(message, field: field) { headers.add(binding.name, text) }
        }
        for index in endpoint.keys {
            let key = schema.keys[index]
            guard let value = keys[key.name] else {
                throw DynamicCodecError("\(service.name).\(endpoint.name) needs the key '\(key.name)' (header \(key.header)); pass --key \(key.name)=VALUE")
            }
            headers.add(key.header, key.form == .bearer ? "Bearer " + value : value)
        }
        let unknownKeys = Set(keys.keys).subtracting(keyNames)
        if let extra = unknownKeys.sorted().first { throw DynamicCodecError("\(service.name).\(endpoint.name) takes no key '\(extra)'") }

        let whole = message
        var body: Data?
        switch endpoint.body {
        case .none:
            break
        case .request:
            for number in bound { message?.fields[number] = nil }
            body = message.map { encode($0) } ?? Data()
        case let .field(index):
            let field = try requestField(index)
            if case let .single(.message(inner))? = message?.fields[field.number] { body = encode(inner) }
            else if case let .message(type) = field.shape.valueType { body = encode(DynamicMessage(type: type)) }
        }
        if body != nil { headers.add("Content-Type", encoding.contentType) }
        var request = RPCRequest(endpoint: descriptor, path: path, logSafePath: logSafe, headers: headers, body: body)
        // The whole message, as gRPC sends it, bound fields included.
        request.messageBytes = whole.map { DynamicBinaryCodec(schema: schema).encode($0) }
        return request
    }

    /// Reads a response as the endpoint's typed result would: a JSON body may hold members
    /// and enum names the schema does not know (a server on a newer schema), which are
    /// skipped, as generated clients skip them (`ignoreUnknownFields`).
    public func outcome(of response: RPCResponse) throws(DynamicCodecError) -> Outcome {
        // As generated code does: the body's own Content-Type wins (gRPC answers in protobuf).
        let encoding = response.headers["Content-Type"].flatMap(BodyEncoding.init(contentType:)) ?? encoding
        if response.isSuccess {
            guard let type = endpoint.response else { return .success(nil) }
            return .success(try decode(response.body, as: type, encoding: encoding))
        }
        guard let declared = endpoint.errors.first(where: { $0.status == response.status }) else {
            return .undeclaredStatus(response.status, body: response.body)
        }
        let body = try declared.body.map { (type: Int) throws(DynamicCodecError) in try decode(response.body, as: type, encoding: encoding) }
        return .declaredError(name: declared.name, status: declared.status, body: body,
                              retryAfter: declared.retryAfter ? response.retryAfter() : nil)
    }

    /// Encodes a message in the endpoint's body encoding.
    public func encode(_ message: DynamicMessage) -> Data {
        switch encoding {
        case .json: return Data(DynamicJSONCodec(schema: schema).encode(message).utf8)
        case .protobuf: return DynamicBinaryCodec(schema: schema).encode(message)
        }
    }

    /// Decodes a received body in the endpoint's body encoding, leniently (see ``decode(_:as:encoding:)``).
    public func decode(_ body: Data, as type: Int) throws(DynamicCodecError) -> DynamicMessage {
        try decode(body, as: type, encoding: encoding)
    }

    /// Decodes a received body in `encoding` as generated code does: JSON members and enum
    /// names the schema does not know are skipped (``DynamicJSONCodec/lenient(schema:)``).
    /// Requests built from a person's JSON stay strict (``request(fromJSON:keys:)``).
    public func decode(_ body: Data, as type: Int, encoding: BodyEncoding) throws(DynamicCodecError) -> DynamicMessage {
        switch encoding {
        case .json: return try DynamicJSONCodec.lenient(schema: schema).decode(body.isEmpty ? Data("{}".utf8) : body, as: type)
        case .protobuf: return try DynamicBinaryCodec(schema: schema).decode(body, as: type)
        }
    }

    private func requestField(_ index: Int) throws(DynamicCodecError) -> FieldDefinition {
        guard let type = endpoint.request, schema.messages[type].fields.indices.contains(index) else {
            throw DynamicCodecError("binding refers to a field the request does not have")
        }
        return schema.messages[type].fields[index]
    }

    /// A bound field's value as text, encoded for a path or query; `nil` when unset (or
    /// default with implicit presence), which only a path slot rejects.
    private func parameterText(_ message: DynamicMessage?, field: FieldDefinition, encoding: ParameterEncoding, required: Bool) throws(DynamicCodecError) -> String? {
        if encoding == .base64url {
            guard case let .single(.bytes(data))? = message?.fields[field.number], required || !data.isEmpty || !field.hasImplicitPresence else {
                if required { throw DynamicCodecError("the path needs '\(field.jsonName)'") }
                return nil
            }
            return PathEncoding.base64URL(data)
        }
        // A path slot takes whatever was given, defaults included, as the generated client does.
        guard let text = try rawParameterText(message, field: field, keepDefault: required) else {
            if required { throw DynamicCodecError("the path needs '\(field.jsonName)'") }
            return nil
        }
        return PathEncoding.percentEncode(text)
    }

    private func rawParameterText(_ message: DynamicMessage?, field: FieldDefinition, keepDefault: Bool = false) throws(DynamicCodecError) -> String? {
        guard case let .single(value)? = message?.fields[field.number] else { return nil }
        if field.hasImplicitPresence && value.isDefault && !keepDefault { return nil }
        switch value {
        case let .string(text): return text
        case let .bool(flag): return flag ? "true" : "false"
        case let .int(number): return String(number)
        case let .uint(number): return String(number)
        case let .float(number): return number.description
        case let .double(number): return number.description
        case let .bytes(data): return PathEncoding.base64URL(data)
        case let .enumeration(number):
            if case let .enumeration(index) = field.shape.valueType, let match = schema.enums[index].cases.first(where: { $0.value == number }) {
                return match.name
            }
            return String(number)
        case .message, .timestamp:
            throw DynamicCodecError("'\(field.jsonName)' cannot be bound to a path, query or header")
        }
    }
}
