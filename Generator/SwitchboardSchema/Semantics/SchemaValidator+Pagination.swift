extension SchemaValidator {
    /// Checks a `paginate` block against the endpoint's request and response messages.
    mutating func buildPagination(_ setting: SettingSyntax, of endpoint: EndpointDefinition) -> PaginationDefinition? {
        let at = setting.keyword.location
        guard let request = endpoint.request, let response = endpoint.response else {
            diagnostics.error(.invalidPagination, "rpc '\(endpoint.name)' pages, so it needs a request and a response message", at: at)
            return nil
        }
        var lines: [String: Token] = [:]
        for pair in stride(from: 0, to: setting.values.count - 1, by: 2) {
            let keyword = setting.values[pair], value = setting.values[pair + 1]
            if lines[keyword.text] != nil {
                diagnostics.error(.invalidPagination, "'\(keyword.text)' appears twice in 'paginate'", at: keyword.location)
                continue
            }
            lines[keyword.text] = value
        }
        for required in ["cursor", "items", "next"] where lines[required] == nil {
            diagnostics.error(.invalidPagination, "'paginate' needs the line '\(required) <field>'", at: at)
        }
        guard let cursorToken = lines["cursor"], let itemsToken = lines["items"], let nextToken = lines["next"] else { return nil }
        let requestMessage = messages[request], responseMessage = messages[response]

        // Every line is checked, so one run reports every mistake of the block.
        var cursor = paginationField(cursorToken, in: requestMessage, role: "the cursor")
        var cursorType: ValueType?
        if let index = cursor {
            cursorType = singleValueType(requestMessage.fields[index])
            if cursorType.map(isCursorType) != true {
                diagnostics.error(.invalidPagination, "the cursor '\(cursorToken.text)' must be a string, integer or bytes field (optional or not)", at: cursorToken.location)
                cursor = nil
            }
        }
        var limit: Int?
        if let token = lines["limit"], let index = paginationField(token, in: requestMessage, role: "the page size") {
            if index == cursor {
                // The page size would be written over the first cursor: pageSize 50 would
                // start at offset 50 and skip the first items.
                diagnostics.error(.invalidPagination, "the page size '\(token.text)' is the cursor too; name two fields", at: token.location)
            } else if case let .scalar(scalar)? = singleValueType(requestMessage.fields[index]), Self.integerScalars.contains(scalar) {
                limit = index
            } else {
                diagnostics.error(.invalidPagination, "the page size '\(token.text)' must be an integer field", at: token.location)
            }
        }
        var items = paginationField(itemsToken, in: responseMessage, role: "the items")
        var itemType: ValueType?
        if let index = items {
            if case let .list(type) = responseMessage.fields[index].shape {
                itemType = type
            } else {
                diagnostics.error(.invalidPagination, "the items '\(itemsToken.text)' must be a list field of \(responseMessage.name)", at: itemsToken.location)
                items = nil
            }
        }
        var more: Int?
        if let token = lines["more"], let index = paginationField(token, in: responseMessage, role: "whether more pages follow") {
            if singleValueType(responseMessage.fields[index]) == .scalar(.bool) {
                more = index
            } else {
                diagnostics.error(.invalidPagination, "'more' must name a bool field of \(responseMessage.name)", at: token.location)
            }
        }

        guard let cursor, let cursorType, let items, let itemType else { return nil }
        // The next cursor: a response field, or a field of the first or last item.
        let parts = nextToken.text.split(separator: ".", maxSplits: 1).map(String.init)
        let next: PaginationDefinition.NextCursor
        let source: FieldDefinition
        if parts.count == 2 {
            guard parts[0] == "first" || parts[0] == "last" else {
                diagnostics.error(.invalidPagination, "'next' is a response field, or 'first.<field>' or 'last.<field>' of the items", at: nextToken.location)
                return nil
            }
            guard case let .message(itemMessage) = itemType else {
                diagnostics.error(.invalidPagination, "'next \(nextToken.text)' reads a field of an item, but the items '\(itemsToken.text)' are not messages", at: nextToken.location)
                return nil
            }
            let fieldToken = Token(kind: .identifier, text: parts[1], integerValue: nil, location: nextToken.location, documentation: [], documentationLocation: nil)
            guard let index = paginationField(fieldToken, in: messages[itemMessage], role: "the next cursor") else { return nil }
            next = parts[0] == "first" ? .firstItemField(index) : .lastItemField(index)
            source = messages[itemMessage].fields[index]
        } else {
            guard let index = paginationField(nextToken, in: responseMessage, role: "the next cursor") else { return nil }
            next = .responseField(index)
            source = responseMessage.fields[index]
        }
        guard singleValueType(source) == cursorType else {
            diagnostics.error(.invalidPagination, "the next cursor '\(nextToken.text)' must have the cursor's type", at: nextToken.location)
            return nil
        }
        return PaginationDefinition(cursorField: cursor, limitField: limit, itemsField: items, next: next, moreField: more)
    }

    static let integerScalars: Set<ScalarType> = [.int32, .int64, .uint32, .uint64, .sint32, .sint64, .fixed32, .fixed64, .sfixed32, .sfixed64]

    /// The field a `paginate` line names, outside any oneof.
    mutating func paginationField(_ token: Token, in message: MessageDefinition, role: String) -> Int? {
        guard let index = message.fields.firstIndex(where: { $0.name == token.text || $0.jsonName == token.text }) else {
            var text = "\(role), '\(token.text)', is not a field of \(message.name)"
            if let suggestion = Parser.suggest(token.text, among: message.fields.map(\.name)) { text += "; did you mean '\(suggestion)'?" }
            diagnostics.error(.invalidPagination, text, at: token.location)
            return nil
        }
        if message.fields[index].oneof != nil {
            diagnostics.error(.invalidPagination, "\(role), '\(token.text)', is a oneof member; name a plain field", at: token.location)
            return nil
        }
        return index
    }

    /// The type of a field holding one value (optional or not); `nil` for lists and maps.
    func singleValueType(_ field: FieldDefinition) -> ValueType? {
        switch field.shape {
        case let .singular(type), let .optional(type): return type
        case .list, .map: return nil
        }
    }

    func isCursorType(_ type: ValueType) -> Bool {
        guard case let .scalar(scalar) = type else { return false }
        return scalar == .string || scalar == .bytes || Self.integerScalars.contains(scalar)
    }
}
