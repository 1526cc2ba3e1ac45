import SwitchboardSchema

/// Translates a service into its namespace (descriptors and error types), service
/// protocol, client, server handler protocol with routes, mock, and event listener.
struct ServiceTranslator {
    let mapping: SwiftTypeMapping
    let access: String
    let service: ServiceDefinition

    var schema: Schema { mapping.schema }
    var namespace: String { service.name }
    var authType: String { service.auth == .account ? "Authenticated" : "Unauthenticated" }

    func declarations() -> [SwiftDeclaration] {
        var result: [SwiftDeclaration] = [.type(namespaceDeclaration()), .type(protocolDeclaration())]
        if let conveniences = conveniencesDeclaration() { result.append(.type(conveniences)) }
        result.append(.type(clientDeclaration()))
        result.append(.type(handlerDeclaration()))
        result.append(.type(handlerRoutes()))
        result.append(.type(namespaceRoutes()))
        result.append(.type(mockDeclaration()))
        if !service.events.isEmpty {
            result.append(.type(listenerDeclaration()))
            result.append(.type(dispatchDeclaration()))
        }
        return result
    }

    // MARK: Names and types

    func typeName(_ index: Int?) -> String? {
        index.map { mapping.valueType(.message($0), from: nil) }
    }

    func errorTypeName(_ endpoint: EndpointDefinition) -> String {
        "\(SwiftNames.uppercaseFirst(SwiftNames.unescaped(endpoint.swiftName)))Error"
    }

    func qualifiedErrorType(_ endpoint: EndpointDefinition) -> String { "\(namespace).\(errorTypeName(endpoint))" }

    func responseType(_ endpoint: EndpointDefinition) -> String { typeName(endpoint.response) ?? "Void" }

    /// The message the request body carries: the request itself, or the field `body` names.
    func requestBodyTypeName(_ endpoint: EndpointDefinition) -> String? {
        switch endpoint.body {
        case .none: return nil
        case .request: return typeName(endpoint.request)
        case let .field(index):
            switch schema.messages[endpoint.request!].fields[index].shape {
            case let .singular(type), let .optional(type): return mapping.valueType(type, from: nil)
            case .list, .map: return nil // the validator allows only a message field
            }
        }
    }

    func resultType(_ endpoint: EndpointDefinition) -> String {
        "RequestResult<\(responseType(endpoint)), \(qualifiedErrorType(endpoint))>"
    }

    func paginationTranslator(_ endpoint: EndpointDefinition) -> PaginationTranslator? {
        endpoint.pagination.map { PaginationTranslator(mapping: mapping, access: access, namespace: namespace, endpoint: endpoint, pagination: $0) }
    }

    func encodingLiteral(_ encoding: BodyEncodingKind) -> String { ".\(encoding.rawValue)" }

    func keyParameters(_ endpoint: EndpointDefinition) -> [String] {
        endpoint.keys.map { "\(SwiftNames.jsonName(schema.keys[$0].name)): \(schema.keys[$0].swiftTypeName)" }
    }

    /// `(_ request: R, accessKey: AccessKey, options: CallOptions)` pieces.
    func requirementParameters(_ endpoint: EndpointDefinition) -> [String] {
        var parameters: [String] = []
        if let request = typeName(endpoint.request) { parameters.append("_ request: \(request)") }
        parameters += keyParameters(endpoint)
        parameters.append("options: CallOptions")
        return parameters
    }

    func documentation(for endpoint: EndpointDefinition) -> [String] {
        var lines = endpoint.documentation
        if !lines.isEmpty { lines.append("") }
        lines.append("- Route: `\(endpoint.verb) \(endpoint.runtimePathTemplate)` (`\(endpoint.rpcName)`)")
        if endpoint.errors.isEmpty {
            lines.append("- Errors: none declared; other statuses arrive as `unrecognized`.")
        } else {
            lines.append("- Errors: " + endpoint.errors.map { "\($0.status) `\($0.swiftName)`" }.joined(separator: ", "))
        }
        if !endpoint.keys.isEmpty { lines.append("- Keys: " + endpoint.keys.map { "`\(schema.keys[$0].swiftTypeName)`" }.joined(separator: ", ")) }
        if let timeout = endpoint.timeoutMilliseconds { lines.append("- Timeout: \(timeout) ms unless the call sets one.") }
        if endpoint.isIdempotent { lines.append("- Idempotent: safe to retry.") }
        if endpoint.isDeprecated { lines.append("- Note: Deprecated in the schema.") }
        return lines
    }

    // MARK: Namespace

    func namespaceDeclaration() -> SwiftTypeDeclaration {
        var members: [SwiftDeclaration] = []
        for endpoint in service.endpoints {
            var arguments = [
                "rpcName: \"\(endpoint.rpcName)\"", "verb: \"\(endpoint.verb)\"",
                "pathTemplate: \"\(endpoint.runtimePathTemplate)\"", "auth: .\(service.auth.rawValue)",
            ]
            if endpoint.isIdempotent { arguments.append("isIdempotent: true") }
            if let timeout = endpoint.timeoutMilliseconds { arguments.append("defaultTimeout: .milliseconds(\(timeout))") }
            if endpoint.isDeprecated { arguments.append("isDeprecated: true") }
            if let body = requestBodyTypeName(endpoint) { arguments.append("requestBodyType: \(body).self") }
            if let response = typeName(endpoint.response) { arguments.append("responseBodyType: \(response).self") }
            let grpcCodes = endpoint.errorStatusByGRPCCode
            if !grpcCodes.isEmpty {
                arguments.append("errorStatusByGRPCCode: [" + grpcCodes.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]")
            }
            if let versions = endpoint.versions { arguments.append("versions: \(versions.lowerBound)...\(versions.upperBound)") }
            if endpoint.encoding == .json { arguments.append("encoding: .json") }
            if let request = typeName(endpoint.request) { arguments.append("requestType: \(request).self") }
            members.append(.property(SwiftProperty(
                documentation: ["`\(endpoint.verb) \(endpoint.runtimePathTemplate)`"], access: access, isStatic: true, isLet: true,
                name: endpoint.swiftName, initializer: "EndpointDescriptor(\(arguments.joined(separator: ", ")))")))
        }
        for endpoint in service.endpoints {
            if let translator = paginationTranslator(endpoint) { members.append(translator.namespaceMember()) }
        }
        for event in service.events {
            members.append(.property(SwiftProperty(
                documentation: ["Pushed as `\(event.verb) \(event.path)`."], access: access, isStatic: true, isLet: true,
                name: "\(event.swiftName)Event",
                initializer: "EventDescriptor(name: \"\(event.name)\", verb: \"\(event.verb)\", path: \"\(event.path)\", acknowledgement: .\(event.acknowledgement.rawValue)"
                    + (typeName(event.payload).map { ", payloadType: \($0).self" } ?? "") + ")")))
        }
        let versions = service.versions.map { "\($0.lowerBound)...\($0.upperBound)" } ?? "nil"
        members.append(.property(SwiftProperty(
            documentation: ["The service's catalogue entry."], access: access, isStatic: true, isLet: true, name: "descriptor",
            initializer: "ServiceDescriptor(name: \"\(service.fullName)\", auth: .\(service.auth.rawValue), versions: \(versions), status: .\(service.status.rawValue), endpoints: [\(service.endpoints.map { "\(namespace).\($0.swiftName)" }.joined(separator: ", "))], events: [\(service.events.map { "\(namespace).\($0.swiftName)Event" }.joined(separator: ", "))]\(countriesArgument))")))
        for endpoint in service.endpoints {
            members.append(.type(errorDeclaration(endpoint)))
        }
        var lines = service.documentation
        if !lines.isEmpty { lines.append("") }
        lines.append("Descriptors and error types of the `\(service.fullName)` service (auth: \(service.auth.rawValue), status: \(service.status.rawValue)).")
        return SwiftTypeDeclaration(kind: .enum, documentation: lines, access: access, name: namespace, members: members)
    }

    /// `, countries: .except(["CHN"])` when the schema limits where the service is offered.
    var countriesArgument: String {
        switch service.countries {
        case nil: return ""
        case let .allow(codes)?: return ", countries: .only([" + codes.map { "\"\($0)\"" }.joined(separator: ", ") + "])"
        case let .deny(codes)?: return ", countries: .except([" + codes.map { "\"\($0)\"" }.joined(separator: ", ") + "])"
        }
    }

    func caseDeclaration(_ item: ErrorCaseDefinition) -> String? {
        var payload: [String] = []
        if let body = typeName(item.body) { payload.append(body) }
        if item.retryAfter { payload.append("retryAfter: Duration?") }
        return payload.isEmpty ? nil : payload.joined(separator: ", ")
    }

    func errorDeclaration(_ endpoint: EndpointDefinition) -> SwiftTypeDeclaration {
        let encoding = "encoding"
        var members: [SwiftDeclaration] = endpoint.errors.map { item in
            .enumCase(SwiftEnumCase(documentation: item.documentation + ["Status \(item.status)."], name: item.swiftName, associatedType: caseDeclaration(item)))
        }
        members.append(.enumCase(SwiftEnumCase(
            documentation: ["A status this version of the schema does not declare."],
            name: "unrecognized", associatedType: "status: Int, body: Data")))

        var decodeCases: [CodeLine] = endpoint.errors.map { item in
            var arguments: [String] = []
            if let body = typeName(item.body) { arguments.append("try response.decodeErrorBody(\(body).self, encoding: \(encoding))") }
            if item.retryAfter { arguments.append("retryAfter: response.retryAfter()") }
            let value = arguments.isEmpty ? ".\(item.swiftName)" : ".\(item.swiftName)(\(arguments.joined(separator: ", ")))"
            return .line("case \(item.status): self = \(value)")
        }
        decodeCases.append(.line("default: return nil"))
        members.append(.function(SwiftFunction(
            access: access, signature: "init?(response: RPCResponse, encoding: BodyEncoding) throws(TransportError)",
            body: [.block("switch response.status", decodeCases)])))

        var statusCases: [CodeLine] = endpoint.errors.map { .line("case .\($0.swiftName): return \($0.status)") }
        statusCases.append(.line("case let .unrecognized(status, _): return status"))
        members.append(.property(SwiftProperty(
            documentation: ["The HTTP-like status this error arrives with."], access: access, name: "status", type: "Int",
            getter: [.block("switch self", statusCases)])))

        var responseCases: [CodeLine] = []
        for item in endpoint.errors {
            var bindings: [String] = []
            if item.body != nil { bindings.append("body") }
            if item.retryAfter { bindings.append("retryAfter") }
            let pattern = bindings.isEmpty ? ".\(item.swiftName)" : "let .\(item.swiftName)(\(bindings.joined(separator: ", ")))"
            var lines: [CodeLine] = []
            var headers = "[:]"
            if item.retryAfter {
                lines.append(.line("var headers = RPCHeaders()"))
                lines.append(.line("if let retryAfter { headers.add(\"Retry-After\", RPCResponse.retryAfterValue(retryAfter)) }"))
                headers = "headers"
            }
            if item.body != nil {
                lines.append(.line("return .error(status: \(item.status), body: body, encoding: encoding, headers: \(headers))"))
            } else {
                lines.append(.line("return RPCResponse(status: \(item.status), headers: \(headers))"))
            }
            responseCases.append(.nested("case \(pattern):", lines))
        }
        responseCases.append(.nested("case let .unrecognized(status, body):", [.line("return RPCResponse(status: status, body: body)")]))
        members.append(.function(SwiftFunction(
            access: access, signature: "func response(encoding: BodyEncoding) -> RPCResponse",
            body: [.block("switch self", responseCases)])))

        return SwiftTypeDeclaration(
            kind: .enum, documentation: ["The errors `\(endpoint.swiftName)` declares."], access: access,
            name: errorTypeName(endpoint), conformances: ["EndpointErrorMapping"], members: members)
    }

    // MARK: Service protocol

    func protocolDeclaration() -> SwiftTypeDeclaration {
        var members: [SwiftDeclaration] = []
        for endpoint in service.endpoints {
            members.append(.function(SwiftFunction(
                documentation: documentation(for: endpoint),
                signature: "func \(endpoint.swiftName)(\(requirementParameters(endpoint).joined(separator: ", "))) async -> \(resultType(endpoint))",
                body: [])))
        }
        var lines = service.documentation
        if !lines.isEmpty { lines.append("") }
        lines.append("Called through the \(service.auth == .account ? "authenticated" : "unauthenticated") connection; `\(namespace)Client` implements it over any transport, `Mock\(namespace)Service` for tests.")
        return SwiftTypeDeclaration(
            kind: .protocol, documentation: lines, access: access, name: "\(namespace)Service", conformances: ["Sendable"], members: members)
    }

    /// Default options, and the throwing form that takes the request's fields.
    func conveniencesDeclaration() -> SwiftTypeDeclaration? {
        var members: [SwiftDeclaration] = []
        for endpoint in service.endpoints {
            let keyArguments = endpoint.keys.map { "\(SwiftNames.jsonName(schema.keys[$0].name)): \(SwiftNames.jsonName(schema.keys[$0].name))" }
            if let request = typeName(endpoint.request) {
                members.append(.function(SwiftFunction(
                    documentation: ["Calls `\(endpoint.swiftName)` with default options."], access: access,
                    signature: "func \(endpoint.swiftName)(\((["_ request: \(request)"] + keyParameters(endpoint)).joined(separator: ", "))) async -> \(resultType(endpoint))",
                    // `self.`: a parameter or local named like the rpc must not hide it.
                    body: [.line("await self.\(endpoint.swiftName)(\((["request"] + keyArguments + ["options: CallOptions()"]).joined(separator: ", ")))")])))
            } else {
                // No request: this is the whole convenience. A throwing form would take the
                // same arguments as the call itself (`options:`), and Swift would pick the
                // non-throwing one, so a `try` around it caught nothing; `.get()` throws.
                members.append(.function(SwiftFunction(
                    documentation: ["Calls `\(endpoint.swiftName)` with default options; `.get()` on the result throws its endpoint error or a transport failure."],
                    access: access,
                    signature: "func \(endpoint.swiftName)(\(keyParameters(endpoint).joined(separator: ", "))) async -> \(resultType(endpoint))",
                    body: [.line("await self.\(endpoint.swiftName)(\((keyArguments + ["options: CallOptions()"]).joined(separator: ", ")))")])))
                if let translator = paginationTranslator(endpoint) {
                    members += translator.serviceMembers(keyParameters: keyParameters(endpoint), keyArguments: keyArguments, errorType: qualifiedErrorType(endpoint))
                }
                continue
            }
            // The throwing form: request fields as parameters.
            let fields = endpoint.request.map { schema.messages[$0].fields.filter { $0.oneof == nil } } ?? []
            let oneofs = endpoint.request.map { schema.messages[$0].oneofs } ?? []
            let names = Set(fields.map(\.swiftName) + oneofs.map(\.swiftName))
            // The call options' label: one no request field, oneof or key takes.
            let taken = names.union(endpoint.keys.map { SwiftNames.jsonName(schema.keys[$0].name) })
            var optionsLabel = ["options", "callOptions", "switchboardCallOptions"].first { !taken.contains($0) } ?? "switchboardCallOptions"
            while taken.contains(optionsLabel) { optionsLabel = "_" + optionsLabel }
            var parameters = fields.map { "\($0.swiftName): \(mapping.parameterType($0, from: nil)) = \(mapping.parameterDefault($0, from: nil))" }
            parameters += oneofs.map { "\($0.swiftName): \(typeName(endpoint.request)!).\($0.swiftTypeName)? = nil" }
            parameters += keyParameters(endpoint)
            parameters.append("\(optionsLabel): CallOptions = CallOptions()")
            var body: [CodeLine] = []
            var callArguments: [String] = []
            if let request = typeName(endpoint.request) {
                let initArguments = fields.map { "\($0.swiftName): \($0.swiftName)" } + oneofs.map { "\($0.swiftName): \($0.swiftName)" }
                body.append(.line("let request = \(request)(\(initArguments.joined(separator: ", ")))"))
                callArguments.append("request")
            }
            callArguments += keyArguments
            callArguments.append("options: \(optionsLabel)")
            body.append(.line("return try await self.\(endpoint.swiftName)(\(callArguments.joined(separator: ", "))).get()"))
            members.append(.function(SwiftFunction(
                documentation: ["Calls `\(endpoint.swiftName)`, throwing its endpoint error or a transport failure."],
                access: access,
                signature: "func \(endpoint.swiftName)",
                parameters: parameters.isEmpty ? nil : parameters,
                signatureSuffix: " async throws(RequestError<\(qualifiedErrorType(endpoint))>) -> \(responseType(endpoint))",
                body: body)))
            if let translator = paginationTranslator(endpoint) {
                members += translator.serviceMembers(keyParameters: keyParameters(endpoint), keyArguments: keyArguments, errorType: qualifiedErrorType(endpoint))
            }
        }
        guard !members.isEmpty else { return nil }
        return SwiftTypeDeclaration(kind: .extension, name: "\(namespace)Service", members: members)
    }

    // MARK: Client

    func clientDeclaration() -> SwiftTypeDeclaration {
        var members: [SwiftDeclaration] = [
            .property(SwiftProperty(access: "private", isLet: true, name: "transport", type: "any RPCTransport<\(authType)>")),
            .function(SwiftFunction(
                documentation: ["Calls the service over `transport`, which must be \(service.auth == .account ? "an authenticated" : "an unauthenticated") connection."],
                access: access, signature: "init(transport: any RPCTransport<\(authType)>)", body: [.line("self.transport = transport")])),
            .function(SwiftFunction(
                documentation: ["Calls the service over `transport`, every call passing through `interceptors` first (the first outermost)."],
                access: access, signature: "init(transport: any RPCTransport<\(authType)>, interceptors: [any ClientInterceptor])",
                body: [.line("self.transport = interceptors.isEmpty ? transport : InterceptedTransport(transport, interceptors: interceptors)")])),
        ]
        for endpoint in service.endpoints {
            members.append(.function(SwiftFunction(
                access: access,
                signature: "func \(endpoint.swiftName)(\(requirementParameters(endpoint).joined(separator: ", "))) async -> \(resultType(endpoint))",
                body: clientBody(endpoint))))
        }
        return SwiftTypeDeclaration(
            kind: .struct, documentation: ["`\(namespace)Service` over an `RPCTransport`."], access: access,
            name: "\(namespace)Client", conformances: ["\(namespace)Service"], members: members)
    }

    func isSensitive(_ endpoint: EndpointDefinition, _ binding: ParameterBinding) -> Bool {
        endpoint.request.map { schema.messages[$0].fields[binding.field].isSensitive } ?? false
    }

    func fieldAccess(_ endpoint: EndpointDefinition, _ binding: ParameterBinding) -> (field: FieldDefinition, access: String) {
        let field = schema.messages[endpoint.request!].fields[binding.field]
        return (field, "request.\(field.swiftName)")
    }

    /// The path's pieces, joined with `+`: literal segments and encoded parameters; and the
    /// same with sensitive parameters redacted, for logs.
    func pathPieces(_ endpoint: EndpointDefinition) -> (pieces: [String], safePieces: [String]) {
        let pathPart = String(endpoint.runtimePathTemplate.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
        var pathPieces: [String] = []
        var safePieces: [String] = []
        var literal = ""
        for character in pathPart {
            literal.append(character)
        }
        var cursor = literal[...]
        while let open = cursor.firstIndex(of: "{") {
            let close = cursor[open...].firstIndex(of: "}")!
            let text = String(cursor[..<open])
            if !text.isEmpty {
                pathPieces.append("\"\(text)\"")
                safePieces.append("\"\(text)\"")
            }
            let name = String(cursor[cursor.index(after: open)..<close])
            let binding = endpoint.pathParameters.first { $0.name == name }!
            let (_, access) = fieldAccess(endpoint, binding)
            pathPieces.append("PathEncoding.percentEncode(\(access).parameterText)")
            safePieces.append(isSensitive(endpoint, binding) ? "\"[REDACTED]\"" : "PathEncoding.percentEncode(\(access).parameterText)")
            cursor = cursor[cursor.index(after: close)...]
        }
        if !cursor.isEmpty {
            pathPieces.append("\"\(cursor)\"")
            safePieces.append("\"\(cursor)\"")
        }
        return (pathPieces, safePieces)
    }

    func clientBody(_ endpoint: EndpointDefinition) -> [CodeLine] {
        var lines: [CodeLine] = []
        // Path: literal segments and encoded parameters.
        let (pathPieces, safePieces) = pathPieces(endpoint)
        let hasQuery = !endpoint.queryParameters.isEmpty
        lines.append(.line("\(hasQuery ? "var" : "let") path = " + pathPieces.joined(separator: " + ")))
        let hasSensitive = endpoint.pathParameters.contains { isSensitive(endpoint, $0) } || endpoint.queryParameters.contains { isSensitive(endpoint, $0) }
        if hasSensitive { lines.append(.line("\(hasQuery ? "var" : "let") logSafePath = " + safePieces.joined(separator: " + "))) }
        // Query: present values only.
        if !endpoint.queryParameters.isEmpty {
            lines.append(.line("var query: [String] = []"))
            if hasSensitive { lines.append(.line("var logSafeQuery: [String] = []")) }
            for binding in endpoint.queryParameters {
                let (field, access) = fieldAccess(endpoint, binding)
                let name = PathEncodingName.encode(binding.name)
                let safeValue = isSensitive(endpoint, binding) ? "\"\(name)=[REDACTED]\"" : nil
                func append(_ value: String) -> [CodeLine] {
                    var body: [CodeLine] = [.line("query.append(\"\(name)=\" + PathEncoding.percentEncode(\(value).parameterText))")]
                    if hasSensitive { body.append(.line("logSafeQuery.append(\(safeValue ?? "\"\(name)=\" + PathEncoding.percentEncode(\(value).parameterText)"))")) }
                    return body
                }
                switch field.shape {
                case let .singular(type):
                    lines.append(.block("if \(mapping.nonDefaultCondition(type, access, from: nil))", append(access)))
                case .optional:
                    lines.append(.block("if let value = \(access)", append("value")))
                case .list:
                    lines.append(.block("for value in \(access)", append("value")))
                case .map:
                    break
                }
            }
            lines.append(.line("if !query.isEmpty { path += \"?\" + query.joined(separator: \"&\") }"))
            if hasSensitive { lines.append(.line("if !logSafeQuery.isEmpty { logSafePath += \"?\" + logSafeQuery.joined(separator: \"&\") }")) }
        }
        // Headers: accepted encoding, bound fields, credentials.
        let encoding = encodingLiteral(endpoint.encoding)
        // Nothing bound to headers: the runtime's shared list, no allocation per call.
        let sharedHeaders = endpoint.headers.isEmpty && endpoint.keys.isEmpty
        if sharedHeaders {
            lines.append(.line("let headers = BodyEncoding\(encoding).requestHeaders(withBody: \(endpoint.body != .none))"))
        } else {
            lines.append(.line("var headers: RPCHeaders = [\"Accept\": BodyEncoding\(encoding).contentType]"))
        }
        for binding in endpoint.headers {
            let (field, access) = fieldAccess(endpoint, binding)
            switch field.shape {
            case let .singular(type):
                lines.append(.line("if \(mapping.nonDefaultCondition(type, access, from: nil)) { headers.add(\"\(binding.name)\", \(access).parameterText) }"))
            default:
                lines.append(.line("if let value = \(access) { headers.add(\"\(binding.name)\", value.parameterText) }"))
            }
        }
        for key in endpoint.keys {
            let definition = schema.keys[key]
            lines.append(.line("headers.add(\(definition.swiftTypeName).headerName, \(SwiftNames.jsonName(definition.name)).headerValue)"))
        }
        // Body.
        var bodyExpression = "nil"
        switch endpoint.body {
        case .none:
            break
        case .request:
            let bound = Set(endpoint.pathParameters.map(\.field) + endpoint.queryParameters.map(\.field) + endpoint.headers.map(\.field))
            let message = schema.messages[endpoint.request!]
            if bound.isEmpty {
                lines.append(.line("let bodyMessage = request"))
            } else {
                lines.append(.line("var bodyMessage = request"))
                for index in bound.sorted() {
                    let field = message.fields[index]
                    lines.append(.line("bodyMessage.\(field.swiftName) = \(mapping.defaultValue(field.shape, from: nil))"))
                }
            }
            bodyExpression = "bodyMessage"
        case let .field(index):
            let field = schema.messages[endpoint.request!].fields[index]
            bodyExpression = "request.\(field.swiftName)"
        }
        // A protobuf body stays a message until a transport needs its bytes (the chat
        // connection writes it straight into its frame; gRPC sends `message` instead).
        let lazyBody = bodyExpression != "nil" && endpoint.encoding == .protobuf
        var bodyArgument = "body: nil"
        if bodyExpression != "nil" {
            if !sharedHeaders { lines.append(.line("headers.add(\"Content-Type\", BodyEncoding\(encoding).contentType)")) }
            if lazyBody {
                bodyArgument = "protobufBody: \(bodyExpression)"
            } else {
                lines.append(.line("let body: Data"))
                lines.append(.doCatch("do throws(TransportError)", [.line("body = try \(bodyExpression).encodedBody(\(encoding))")], [.line("return .failure(error)")]))
                bodyArgument = "body: body"
            }
        }
        let message = endpoint.request != nil ? ", message: request" : ""
        lines.append(.line("let rpcRequest = RPCRequest(endpoint: \(namespace).\(endpoint.swiftName), path: path, logSafePath: \(hasSensitive ? "logSafePath" : "path"), headers: headers, \(bodyArgument)\(message))"))
        let decode = endpoint.response != nil
            ? "{ body, encoding in try \(typeName(endpoint.response)!)(decoding: body, encoding: encoding) }"
            : "{ _, _ in () }"
        lines.append(.line("return await RPCCall.perform(consume rpcRequest, over: transport, options: options, encoding: \(encoding), errors: \(qualifiedErrorType(endpoint)).self, decode: \(decode))"))
        return lines
    }

    // MARK: Server handler

    func handlerDeclaration() -> SwiftTypeDeclaration {
        var members: [SwiftDeclaration] = []
        for endpoint in service.endpoints {
            var parameters: [String] = []
            if let request = typeName(endpoint.request) { parameters.append("_ request: \(request)") }
            parameters.append("context: ServerContext")
            members.append(.function(SwiftFunction(
                documentation: ["Serves `\(endpoint.verb) \(endpoint.runtimePathTemplate)`; throw a declared error to answer with its status."],
                signature: "func \(endpoint.swiftName)(\(parameters.joined(separator: ", "))) async throws(\(qualifiedErrorType(endpoint))) -> \(responseType(endpoint))",
                body: [])))
        }
        return SwiftTypeDeclaration(
            kind: .protocol,
            documentation: ["The server side of `\(namespace)`: implement it and serve `routes` from an `RPCRouter`."],
            access: access, name: "\(namespace)Handler", conformances: ["Sendable"], members: members)
    }

    func handlerRoutes() -> SwiftTypeDeclaration {
        var routeFunctions: [SwiftDeclaration] = []
        var routeCalls: [String] = []
        for endpoint in service.endpoints {
            var routeLines: [CodeLine] = []
            let encoding = encodingLiteral(endpoint.encoding)
            var body: [CodeLine] = []
            var callArguments: [String] = []
            if let request = typeName(endpoint.request) {
                var bind: [CodeLine] = []
                switch endpoint.body {
                case .request:
                    let mutated = !(endpoint.pathParameters.isEmpty && endpoint.queryParameters.isEmpty && endpoint.headers.isEmpty)
                    bind.append(.line("\(mutated ? "var" : "let") message = try ServerBinding.body(request, as: \(request).self, encoding: \(encoding))"))
                case let .field(index):
                    let field = schema.messages[endpoint.request!].fields[index]
                    bind.append(.line("var message = \(request)()"))
                    bind.append(.line("message.\(field.swiftName) = try ServerBinding.body(request, as: \(mapping.valueType(field.shape.valueType, from: nil)).self, encoding: \(encoding))"))
                case .none:
                    // Nothing bound into it (a request with no fields, say): `let`, or the
                    // compiler warns that it is never mutated.
                    let mutated = !(endpoint.pathParameters.isEmpty && endpoint.queryParameters.isEmpty && endpoint.headers.isEmpty)
                    bind.append(.line("\(mutated ? "var" : "let") message = \(request)()"))
                }
                for binding in endpoint.pathParameters {
                    let (field, _) = fieldAccess(endpoint, binding)
                    bind.append(.line("message.\(field.swiftName) = try ServerBinding.path(\"\(binding.name)\", in: context, as: \(mapping.valueType(field.shape.valueType, from: nil)).self)"))
                }
                for binding in endpoint.queryParameters {
                    let (field, _) = fieldAccess(endpoint, binding)
                    let type = mapping.valueType(field.shape.valueType, from: nil)
                    if case .list = field.shape {
                        bind.append(.line("message.\(field.swiftName) = try ServerBinding.queryList(\"\(binding.name)\", in: context, as: \(type).self)"))
                    } else {
                        bind.append(.line("if let value = try ServerBinding.query(\"\(binding.name)\", in: context, as: \(type).self) { message.\(field.swiftName) = value }"))
                    }
                }
                for binding in endpoint.headers {
                    let (field, _) = fieldAccess(endpoint, binding)
                    bind.append(.line("if let value = try ServerBinding.header(\"\(binding.name)\", in: context, as: \(mapping.valueType(field.shape.valueType, from: nil)).self) { message.\(field.swiftName) = value }"))
                }
                bind.append(.line("return message"))
                body.append(.line("let message: \(request)"))
                body.append(.doCatch("do throws(RequestBindingError)", [.enclosed("message = try { () throws(RequestBindingError) -> \(request) in", bind, "}()")], [.line("return ServerBinding.badRequest(error)")]))
                callArguments.append("message")
            }
            callArguments.append("context: context")
            let success = endpoint.response != nil ? "return .ok(try await self.\(endpoint.swiftName)(\(callArguments.joined(separator: ", "))), encoding: \(encoding))"
                : "try await self.\(endpoint.swiftName)(\(callArguments.joined(separator: ", ")))\nreturn .ok"
            body.append(.doCatch("do throws(\(qualifiedErrorType(endpoint)))", success.split(separator: "\n").map { .line(String($0)) }, [.line("return error.response(encoding: \(encoding))")]))
            // The same call for a whole message in protobuf, as gRPC sends it.
            var messageBody: [CodeLine] = []
            if let request = typeName(endpoint.request) {
                messageBody.append(.line("let message: \(request)"))
                if endpoint.headers.isEmpty {
                    messageBody.append(.doCatch("do throws(RequestBindingError)", [.line("message = try ServerBinding.message(body, as: \(request).self)")],
                                                [.line("return ServerBinding.badRequest(error)")]))
                } else {
                    // Header-bound fields come from the call's metadata when it carries them, as
                    // over the WebSocket: a header that call options or an interceptor set is the
                    // value the handler sees on both transports. Without it, the message's value.
                    var bind: [CodeLine] = [.line("var message = try ServerBinding.message(body, as: \(request).self)")]
                    for binding in endpoint.headers {
                        let (field, _) = fieldAccess(endpoint, binding)
                        bind.append(.line("if let value = try ServerBinding.header(\"\(binding.name)\", in: context, as: \(mapping.valueType(field.shape.valueType, from: nil)).self) { message.\(field.swiftName) = value }"))
                    }
                    bind.append(.line("return message"))
                    messageBody.append(.doCatch("do throws(RequestBindingError)", [.enclosed("message = try { () throws(RequestBindingError) -> \(request) in", bind, "}()")],
                                                [.line("return ServerBinding.badRequest(error)")]))
                }
            }
            let protobufSuccess = success.replacingOccurrences(of: "encoding: \(encoding))", with: "encoding: .protobuf)")
            messageBody.append(.doCatch("do throws(\(qualifiedErrorType(endpoint)))", protobufSuccess.split(separator: "\n").map { .line(String($0)) },
                                        [.line("return error.response(encoding: .protobuf)")]))
            let messageParameter = endpoint.request != nil ? "body" : "_"
            routeLines.append(.enclosed("RPCRoute(endpoint: \(namespace).\(endpoint.swiftName), message: { \(messageParameter), context in", messageBody, "}) { request, context in"))
            routeLines.append(.enclosed("", body, "}"))
            // One function per route: one getter holding every route's closures type-checks
            // in time that grows faster than the endpoints (0.5 s at 80, 5.6 s at 240).
            let function = "_switchboardRoute_\(SwiftNames.unescaped(endpoint.swiftName))"
            routeFunctions.append(.function(SwiftFunction(
                access: "private", signature: "func \(function)() -> RPCRoute", body: routeLines)))
            routeCalls.append("\(function)()")
        }
        let property = SwiftProperty(
            documentation: ["Routes for every endpoint, bound to this handler."], access: access, name: "routes",
            type: "[RPCRoute]", getter: [.line("[\(routeCalls.joined(separator: ", "))]")])
        return SwiftTypeDeclaration(kind: .extension, name: "\(namespace)Handler", members: [.property(property)] + routeFunctions)
    }

    /// The same routes reached through the namespace, which stays unambiguous for a type
    /// that implements several services' handler protocols (each has its own `routes`).
    func namespaceRoutes() -> SwiftTypeDeclaration {
        let function = SwiftFunction(
            documentation: ["The routes of every endpoint, bound to `handler`; unambiguous when one type serves several services."],
            access: access, signature: "static func routes(_ handler: some \(namespace)Handler) -> [RPCRoute]",
            body: [.line("handler.routes")])
        return SwiftTypeDeclaration(kind: .extension, name: namespace, members: [.function(function)])
    }

    func indent(_ line: CodeLine) -> CodeLine {
        switch line {
        case let .line(text): return .line("    " + text)
        case let .block(header, body, closing): return .block("    " + header, body, closing: "    " + closing)
        case let .nested(header, body): return .nested("    " + header, body)
        case let .enclosed(opening, body, closing): return .enclosed("    " + opening, body, "    " + closing)
        case let .doCatch(header, body, handler): return .doCatch("    " + header, body, handler)
        }
    }

    // MARK: Mock

    func mockCallType(_ endpoint: EndpointDefinition) -> String {
        let request = typeName(endpoint.request)
        if endpoint.keys.isEmpty { return request ?? "Void" }
        // Swift has no one-element tuple: a lone key is recorded as itself.
        if request == nil && endpoint.keys.count == 1 { return schema.keys[endpoint.keys[0]].swiftTypeName }
        var parts: [String] = []
        if let request { parts.append("request: \(request)") }
        parts += keyParameters(endpoint)
        return "(\(parts.joined(separator: ", ")))"
    }

    func mockDeclaration() -> SwiftTypeDeclaration {
        var members: [SwiftDeclaration] = []
        for endpoint in service.endpoints {
            members.append(.property(SwiftProperty(
                documentation: ["Stubs, scripted results and recorded calls of `\(endpoint.swiftName)`."], access: access, isLet: true,
                name: "\(endpoint.swiftName)Mock",
                initializer: "MockEndpoint<\(mockCallType(endpoint)), \(responseType(endpoint)), \(qualifiedErrorType(endpoint))>(rpcName: \"\(endpoint.rpcName)\")")))
        }
        members.append(.function(SwiftFunction(documentation: ["Creates a mock; every endpoint starts unstubbed."], access: access, signature: "init()", body: [])))
        for endpoint in service.endpoints {
            var arguments: [String] = []
            if endpoint.request != nil { arguments.append(endpoint.keys.isEmpty ? "request" : "request: request") }
            arguments += endpoint.keys.map { "\(SwiftNames.jsonName(schema.keys[$0].name)): \(SwiftNames.jsonName(schema.keys[$0].name))" }
            let call: String
            if endpoint.keys.isEmpty {
                call = arguments.first ?? "()"
            } else if endpoint.request == nil && endpoint.keys.count == 1 {
                call = SwiftNames.jsonName(schema.keys[endpoint.keys[0]].name)
            } else {
                call = "(\(arguments.joined(separator: ", ")))"
            }
            members.append(.function(SwiftFunction(
                access: access,
                signature: "func \(endpoint.swiftName)(\(requirementParameters(endpoint).joined(separator: ", "))) async -> \(resultType(endpoint))",
                // The path the client would send, so the mock refuses what it refuses.
                body: [.line("await \(endpoint.swiftName)Mock.invoke(\(call), options: options, endpoint: \(namespace).\(endpoint.swiftName), path: "
                             + pathPieces(endpoint).pieces.joined(separator: " + ") + ")")])))
        }
        return SwiftTypeDeclaration(
            kind: .class,
            documentation: ["A thread-safe test double of `\(namespace)Service`: stub each endpoint, script results, and inspect calls."],
            access: access, name: "Mock\(namespace)Service", conformances: ["\(namespace)Service"], members: members)
    }

    // MARK: Events

    func listenerDeclaration() -> SwiftTypeDeclaration {
        var members: [SwiftDeclaration] = []
        for event in service.events {
            var parameters: [String] = []
            if let payload = typeName(event.payload) { parameters.append("_ payload: \(payload)") }
            parameters.append("context: EventContext")
            var lines = event.documentation
            if !lines.isEmpty { lines.append("") }
            lines.append("- Push: `\(event.verb) \(event.path)`; " + (event.acknowledgement == .afterHandling
                ? "acknowledged only when this returns without throwing."
                : "acknowledged on receipt."))
            members.append(.function(SwiftFunction(
                documentation: lines,
                signature: "func \(event.swiftName)(\(parameters.joined(separator: ", "))) async throws", body: [])))
        }
        return SwiftTypeDeclaration(
            kind: .protocol, documentation: ["Receives the requests `\(namespace)` pushes, one at a time and in order."],
            access: access, name: "\(namespace)EventListener", conformances: ["Sendable"], members: members)
    }

    func dispatchDeclaration() -> SwiftTypeDeclaration {
        let encoding = encodingLiteral(service.encoding)
        var body: [CodeLine] = []
        for event in service.events {
            var handling: [CodeLine] = []
            var arguments: [String] = []
            if let payload = typeName(event.payload) {
                handling.append(.line("let payload: \(payload)"))
                handling.append(.doCatch("do", [.line("payload = try \(payload)(decoding: request.body ?? Data(), encoding: \(encoding))")], [.line("return .reject(EventOutcome.badRequest, reason: \"\(namespace).\(event.swiftName) payload does not decode: \\(error)\")")]))
                arguments.append("payload")
            }
            arguments.append("context: context")
            let call = "try await listener.\(event.swiftName)(\(arguments.joined(separator: ", ")))"
            switch event.acknowledgement {
            case .afterHandling:
                handling.append(.doCatch("do", [.line(call), .line("return .ok")], [.line("return .handlerFailed(reason: \"\\(error)\")")]))
            case .onReceipt:
                handling.append(.line("_ = try? await listener.\(event.swiftName)(\(arguments.joined(separator: ", ")))"))
                handling.append(.line("return .ok"))
            }
            body.append(.block("if \(namespace).\(event.swiftName)Event.matches(request)", handling))
        }
        body.append(.line("return .unknown"))
        let function = SwiftFunction(
            documentation: ["Decodes a pushed request and hands it to `listener`; the outcome says how to answer the server."],
            access: access, signature: "static func dispatch(_ request: ServerRequest, to listener: some \(namespace)EventListener) async -> EventOutcome",
            body: [.line("let context = EventContext(headers: request.headers)")] + body)
        return SwiftTypeDeclaration(kind: .extension, name: namespace, members: [.function(function)])
    }
}

/// Query names are written as given; only characters that need it are escaped.
enum PathEncodingName {
    static func encode(_ name: String) -> String {
        name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-._~".unicodeScalars.contains($0)) }
            ? name : name.addingPercentEncodingForQuery()
    }
}

extension String {
    func addingPercentEncodingForQuery() -> String {
        var output = ""
        for byte in utf8 {
            if (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) {
                output.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                output += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return output
    }

    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
