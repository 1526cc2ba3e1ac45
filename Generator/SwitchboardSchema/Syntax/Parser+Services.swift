extension Parser {
    static let verbs: Set<String> = ["GET", "PUT", "POST", "PATCH", "DELETE", "HEAD"]

    static func startsServiceMember(_ token: Token) -> Bool {
        token.kind == .rightBrace || token.kind == .at || token.isKeyword("rpc") || token.isKeyword("event")
            || ["auth", "version", "status", "encoding", "countries"].contains { token.isKeyword($0) }
    }

    static func startsEndpointSetting(_ token: Token) -> Bool {
        token.kind == .rightBrace
            || (token.kind == .identifier && (Self.verbs.contains(token.text) || Self.endpointKeywords.contains(token.text)))
    }

    static let endpointKeywords: Set<String> = ["errors", "error", "timeout", "idempotent", "keys", "header", "body", "encoding", "rpcName", "ack", "paginate", "version"]

    /// The lines of a `paginate { ... }` block.
    static let paginationKeywords: Set<String> = ["cursor", "limit", "items", "next", "more"]

    // MARK: key

    mutating func parseKey(documentation: [String]) -> KeySyntax? {
        advance() // 'key'
        guard let name = expectName("a key name") else {
            recover(until: Self.startsTopLevelDeclaration)
            return nil
        }
        guard expect(.colon, "after key name '\(name.text)'") != nil else {
            recover(until: Self.startsTopLevelDeclaration)
            return nil
        }
        guard current.isKeyword("header") else {
            diagnostics.error(.expectedToken, "expected 'header \"Name\"' in key '\(name.text)', found \(describe(current))", at: current.location)
            recover(until: Self.startsTopLevelDeclaration)
            return nil
        }
        advance()
        let header = expect(.string, "naming the header of key '\(name.text)'")
        let form = current.kind == .identifier && !Self.startsTopLevelDeclaration(current) ? NameSyntax(text: advance().text, location: tokens[index - 1].location) : nil
        return KeySyntax(name: name, header: header, form: form, documentation: documentation)
    }

    // MARK: errors

    /// A keyword that starts a declaration only the top level holds, so a block that meets
    /// one was left open (checked at the start of each member, where it cannot be a name).
    static func startsTopLevelOnly(_ token: Token) -> Bool {
        Self.startsTopLevelDeclaration(token) && token.kind != .at
    }

    /// `rpc` or `event`, which no line of an rpc or event body starts with: the body before it was left open.
    static func startsNextServiceMember(_ token: Token) -> Bool {
        token.isKeyword("rpc") || token.isKeyword("event")
    }

    mutating func parseErrorSet(documentation: [String]) -> ErrorSetSyntax? {
        advance() // 'errors'
        guard let name = expectName("an error set name"), let open = expect(.leftBrace, "to open the error set") else {
            recover(until: Self.startsTopLevelDeclaration)
            if current.kind == .leftBrace { skipBlock() }
            return nil
        }
        var cases: [ErrorCaseSyntax] = []
        while !atEnd, current.kind != .rightBrace, !Self.startsTopLevelOnly(current) {
            let before = index
            if let item = parseErrorCase() { cases.append(item) } else {
                recover(until: { $0.kind == .integer || $0.kind == .rightBrace })
            }
            if index == before { advance() }
        }
        expectClose(opened: open, "error set '\(name.text)'")
        return ErrorSetSyntax(name: name, cases: cases, documentation: documentation)
    }

    /// `404 notFound`, `422 invalid(ValidationError, retryAfter)` or `404 notFound grpc NOT_FOUND`.
    mutating func parseErrorCase() -> ErrorCaseSyntax? {
        let documentation = current.documentation
        guard current.kind == .integer else {
            diagnostics.error(.expectedToken, "expected a status code such as '404 notFound', found \(describe(current))", at: current.location)
            return nil
        }
        let status = parseKey()
        guard let name = expectName("an error case name after the status") else { return nil }
        var bindings: [NameSyntax] = []
        if current.kind == .leftParen {
            advance()
            while !atEnd, current.kind != .rightParen, current.kind != .rightBrace {
                guard let binding = parseDottedName("a message type or 'retryAfter'") else { break }
                bindings.append(NameSyntax(text: binding.map(\.text).joined(separator: "."), location: binding[0].location))
                if current.kind == .comma { advance() } else { break }
            }
            _ = expect(.rightParen, "to close the error's bindings")
        }
        var grpcCode: NameSyntax?
        if current.isKeyword("grpc") {
            advance()
            grpcCode = expectName("a gRPC status code name such as NOT_FOUND after 'grpc'")
        }
        return ErrorCaseSyntax(status: status, name: name, bindings: bindings, grpcCode: grpcCode, documentation: documentation)
    }

    // MARK: service

    mutating func parseService(documentation: [String], attributes: [AttributeSyntax]) -> ServiceSyntax? {
        advance() // 'service'
        guard let name = expectName("a service name"), let open = expect(.leftBrace, "to open the service body") else {
            recover(until: { $0.kind == .leftBrace || Self.startsTopLevelDeclaration($0) })
            if current.kind == .leftBrace { skipBlock() }
            return nil
        }
        var service = ServiceSyntax(name: name, documentation: documentation, attributes: attributes, settings: [], endpoints: [], events: [])
        while !atEnd, current.kind != .rightBrace, !Self.startsTopLevelOnly(current) {
            let before = index
            let memberDocumentation = current.documentation
            let memberAttributes = parseAttributes()
            if current.isKeyword("rpc") {
                if let endpoint = parseEndpoint(documentation: memberDocumentation, attributes: memberAttributes) {
                    service.endpoints.append(endpoint)
                }
            } else if current.isKeyword("event") {
                if let event = parseEvent(documentation: memberDocumentation) { service.events.append(event) }
            } else if current.isKeyword("auth") || current.isKeyword("status") || current.isKeyword("encoding") {
                let keyword = NameSyntax(text: advance().text, location: tokens[index - 1].location)
                if let value = expectName("a value for '\(keyword.text)'") {
                    service.settings.append(SettingSyntax(keyword: keyword, values: [tokens[index - 1]]))
                    _ = value
                }
            } else if current.isKeyword("version") {
                service.settings.append(parseVersionRange())
            } else if current.isKeyword("countries") {
                service.settings.append(parseCountries())
            } else {
                var message = "expected 'rpc', 'event', 'auth', 'version', 'status', 'encoding' or 'countries' in service '\(name.text)', found \(describe(current))"
                if current.kind == .identifier, let suggestion = Self.suggest(current.text, among: ["rpc", "event", "auth", "version", "status", "encoding", "countries"]) {
                    message += "; did you mean '\(suggestion)'?"
                }
                diagnostics.error(.expectedToken, message, at: current.location)
                advance()
                recover(until: Self.startsServiceMember)
            }
            if index == before { advance() }
        }
        expectClose(opened: open, "service '\(name.text)'")
        return service
    }

    /// `version 1` or `version 1 to 3`, for a service or an rpc.
    mutating func parseVersionRange() -> SettingSyntax {
        let keyword = NameSyntax(text: advance().text, location: tokens[index - 1].location)
        var values: [Token] = []
        if let low = consume(.integer) {
            values.append(low)
            if current.isKeyword("to") {
                advance()
                if let high = expect(.integer, "after 'to'") { values.append(high) }
            }
        } else {
            diagnostics.error(.expectedToken, "expected a version number after 'version', found \(describe(current))", at: current.location)
        }
        return SettingSyntax(keyword: keyword, values: values)
    }

    /// `countries [USA, GBR]` (where the service is offered) or `countries [!CHN, !RUS]`
    /// (where it is not); each value keeps a leading `!` in its text.
    mutating func parseCountries() -> SettingSyntax {
        let keyword = NameSyntax(text: advance().text, location: tokens[index - 1].location)
        var values: [Token] = []
        guard expect(.leftBracket, "after 'countries'") != nil else { return SettingSyntax(keyword: keyword, values: values) }
        while !atEnd, current.kind != .rightBracket {
            let negated = current.kind == .bang
            let start = current.location
            if negated { advance() }
            guard current.kind == .identifier else {
                diagnostics.error(.expectedToken, "expected a country code such as 'CHN' or '!CHN', found \(describe(current))", at: current.location)
                break
            }
            let code = advance()
            values.append(Token(kind: .identifier, text: (negated ? "!" : "") + code.text, integerValue: nil, location: start, documentation: [], documentationLocation: nil))
            if current.kind == .comma { advance() } else { break }
        }
        _ = expect(.rightBracket, "to close the list of countries")
        return SettingSyntax(keyword: keyword, values: values)
    }

    /// `(Type)` or `()`; returns nil for `()`.
    mutating func parseParenthesizedType(_ what: String) -> [NameSyntax]?? {
        guard expect(.leftParen, "before the \(what) type") != nil else { return .none }
        if current.kind == .rightParen {
            advance()
            return .some(nil)
        }
        guard let type = parseDottedName("the \(what) message type"), expect(.rightParen, "after the \(what) type") != nil else { return .none }
        return .some(type)
    }

    mutating func parseRouteLine() -> (verb: NameSyntax, path: Token)? {
        let verb = NameSyntax(text: advance().text, location: tokens[index - 1].location)
        guard let path = expect(.string, "with the path after '\(verb.text)'") else { return nil }
        return (verb, path)
    }

    mutating func parseEndpoint(documentation: [String], attributes: [AttributeSyntax]) -> EndpointSyntax? {
        advance() // 'rpc'
        guard let name = expectName("an endpoint name") else {
            recover(until: Self.startsServiceMember)
            if current.kind == .leftBrace { skipBlock() }
            return nil
        }
        guard case let .some(request) = parseParenthesizedType("request") else {
            recover(until: { $0.kind == .leftBrace || Self.startsServiceMember($0) })
            if current.kind == .leftBrace { skipBlock() }
            return nil
        }
        var response: [NameSyntax]?
        if current.kind == .arrow {
            advance()
            if current.kind == .leftParen, peek().kind == .rightParen {
                advance()
                advance()
            } else {
                response = parseDottedName("the response message type")
            }
        }
        var endpoint = EndpointSyntax(name: name, request: request, response: response, documentation: documentation,
                                      attributes: attributes, route: nil, settings: [], errors: [])
        guard let open = expect(.leftBrace, "to open the body of rpc '\(name.text)'") else {
            recover(until: Self.startsServiceMember)
            return endpoint
        }
        // `errors CommonErrors` is a line of an rpc body, so only the other top-level keywords end it.
        while !atEnd, current.kind != .rightBrace, !Self.startsNextServiceMember(current),
              !Self.startsTopLevelOnly(current) || current.isKeyword("errors") {
            let before = index
            parseEndpointLine(into: &endpoint)
            if index == before { advance() }
        }
        expectClose(opened: open, "rpc '\(name.text)'", runsOnAt: Self.startsNextServiceMember)
        return endpoint
    }

    /// An uppercase word followed by a string is a route; the validator checks the verb.
    var looksLikeRoute: Bool { mutating get {
        current.kind == .identifier && peek().kind == .string && current.text.allSatisfy { $0.isUppercase }
    } }

    mutating func parseEndpointLine(into endpoint: inout EndpointSyntax) {
        guard current.kind == .identifier else {
            diagnostics.error(.expectedToken, "expected a route such as 'GET \"/path\"' or a setting in rpc '\(endpoint.name.text)', found \(describe(current))", at: current.location)
            advance()
            recover(until: Self.startsEndpointSetting)
            return
        }
        if looksLikeRoute {
            if endpoint.route != nil {
                diagnostics.error(.duplicateRoute, "rpc '\(endpoint.name.text)' has a second route; each endpoint has one", at: current.location)
            }
            endpoint.route = parseRouteLine()
            return
        }
        let keyword = NameSyntax(text: current.text, location: current.location)
        switch current.text {
        case "error":
            let documentation = current.documentation
            advance()
            if var item = parseErrorCase() {
                item.documentation = documentation + item.documentation
                endpoint.errors.append(item)
            }
        case "idempotent":
            advance()
            endpoint.settings.append(SettingSyntax(keyword: keyword, values: []))
        case "errors", "keys":
            advance()
            var values: [Token] = []
            repeat {
                if current.kind == .comma { advance() }
                guard current.kind == .identifier else {
                    diagnostics.error(.expectedToken, "expected a name after '\(keyword.text)', found \(describe(current))", at: current.location)
                    break
                }
                values.append(advance())
            } while current.kind == .comma
            endpoint.settings.append(SettingSyntax(keyword: keyword, values: values))
        case "timeout":
            advance()
            var values: [Token] = []
            if let amount = expect(.integer, "after 'timeout'") {
                values.append(amount)
                if current.kind == .identifier, current.text == "s" || current.text == "ms" { values.append(advance()) }
            }
            endpoint.settings.append(SettingSyntax(keyword: keyword, values: values))
        case "header":
            advance()
            var values: [Token] = []
            if let header = expect(.string, "naming the header") {
                values.append(header)
                if current.kind == .identifier { values.append(advance()) } else {
                    diagnostics.error(.expectedToken, "expected the field bound to header \"\(header.text)\", found \(describe(current))", at: current.location)
                }
            }
            endpoint.settings.append(SettingSyntax(keyword: keyword, values: values))
        case "body":
            advance()
            if current.kind == .star || current.kind == .identifier {
                endpoint.settings.append(SettingSyntax(keyword: keyword, values: [advance()]))
            } else {
                diagnostics.error(.expectedToken, "expected '*' or a field name after 'body', found \(describe(current))", at: current.location)
            }
        case "encoding", "ack":
            advance()
            if let value = expectName("a value for '\(keyword.text)'") {
                endpoint.settings.append(SettingSyntax(keyword: keyword, values: [tokens[index - 1]]))
                _ = value
            }
        case "paginate":
            advance()
            if let setting = parsePagination(keyword: keyword) { endpoint.settings.append(setting) }
        case "version":
            endpoint.settings.append(parseVersionRange())
        case "rpcName":
            advance()
            if let value = expect(.string, "after 'rpcName'") {
                endpoint.settings.append(SettingSyntax(keyword: keyword, values: [value]))
            }
        default:
            var message = "unknown setting '\(current.text)' in rpc '\(endpoint.name.text)'"
            if let suggestion = Self.suggest(current.text, among: Array(Self.endpointKeywords).sorted() + Array(Self.verbs).sorted()) {
                message += "; did you mean '\(suggestion)'?"
            } else if Self.verbs.contains(current.text.uppercased()) {
                message += "; verbs are uppercase: '\(current.text.uppercased())'"
            }
            diagnostics.error(.expectedToken, message, at: current.location)
            advance()
            recover(until: Self.startsEndpointSetting)
        }
    }

    /// `paginate { cursor f  limit f  items f  next f|first.f|last.f  more f }`, kept as a
    /// setting whose values alternate a line's keyword and its (possibly dotted) value.
    mutating func parsePagination(keyword: NameSyntax) -> SettingSyntax? {
        guard let open = expect(.leftBrace, "to open the 'paginate' block") else { return nil }
        var values: [Token] = []
        // An unclosed block ends where the rpc's next line or the next member starts.
        while !atEnd, current.kind != .rightBrace, !Self.startsEndpointSetting(current), !Self.startsServiceMember(current) {
            guard current.kind == .identifier, Self.paginationKeywords.contains(current.text) else {
                var message = "expected one of \(Self.paginationKeywords.sorted().map { "'\($0)'" }.joined(separator: ", ")) in 'paginate', found \(describe(current))"
                if current.kind == .identifier, let suggestion = Self.suggest(current.text, among: Self.paginationKeywords.sorted()) {
                    message += "; did you mean '\(suggestion)'?"
                }
                diagnostics.error(.expectedToken, message, at: current.location)
                advance()
                // Skip the unknown line's value too, so one mistake gives one error.
                if current.kind == .identifier || current.kind == .integer, !Self.paginationKeywords.contains(current.text) { advance() }
                continue
            }
            let line = advance()
            guard let first = expectName("a field name after '\(line.text)'") else { continue }
            var text = first.text
            while current.kind == .dot {
                advance()
                guard let next = expectName("a field name after '.'") else { break }
                text += "." + next.text
            }
            values.append(line)
            values.append(Token(kind: .identifier, text: text, integerValue: nil, location: first.location, documentation: [], documentationLocation: nil))
        }
        expectClose(opened: open, "'paginate'", runsOnAt: { Self.startsEndpointSetting($0) && $0.kind != .rightBrace })
        return SettingSyntax(keyword: keyword, values: values)
    }

    mutating func parseEvent(documentation: [String]) -> EventSyntax? {
        advance() // 'event'
        guard let name = expectName("an event name") else {
            recover(until: Self.startsServiceMember)
            if current.kind == .leftBrace { skipBlock() }
            return nil
        }
        var payload: [NameSyntax]?
        if current.kind == .leftParen {
            guard case let .some(type) = parseParenthesizedType("payload") else {
                recover(until: Self.startsServiceMember)
                return nil
            }
            payload = type
        }
        var event = EventSyntax(name: name, payload: payload, documentation: documentation, route: nil, settings: [])
        guard let open = expect(.leftBrace, "to open the body of event '\(name.text)'") else {
            recover(until: Self.startsServiceMember)
            return event
        }
        while !atEnd, current.kind != .rightBrace, !Self.startsTopLevelOnly(current), !Self.startsNextServiceMember(current) {
            let before = index
            if looksLikeRoute {
                event.route = parseRouteLine()
            } else if current.isKeyword("ack") {
                let keyword = NameSyntax(text: advance().text, location: tokens[index - 1].location)
                if expectName("'afterHandling' or 'onReceipt' after 'ack'") != nil {
                    event.settings.append(SettingSyntax(keyword: keyword, values: [tokens[index - 1]]))
                }
            } else {
                diagnostics.error(.expectedToken, "expected a route such as 'PUT \"/path\"' or 'ack' in event '\(name.text)', found \(describe(current))", at: current.location)
                advance()
                recover(until: { $0.kind == .rightBrace || $0.isKeyword("ack") || ($0.kind == .identifier && Self.verbs.contains($0.text)) })
            }
            if index == before { advance() }
        }
        expectClose(opened: open, "event '\(name.text)'", runsOnAt: Self.startsNextServiceMember)
        return event
    }
}
