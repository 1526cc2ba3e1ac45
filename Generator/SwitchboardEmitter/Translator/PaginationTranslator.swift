import SwitchboardSchema

/// Translates an endpoint's `paginate` block: the `Pagination` value in the service's
/// namespace, and the `…Pages` and `…Items` methods on its service protocol.
struct PaginationTranslator {
    let mapping: SwiftTypeMapping
    let access: String
    let namespace: String
    let endpoint: EndpointDefinition
    let pagination: PaginationDefinition

    var schema: Schema { mapping.schema }
    var request: MessageDefinition { schema.messages[endpoint.request!] }
    var response: MessageDefinition { schema.messages[endpoint.response!] }
    var requestType: String { mapping.valueType(.message(endpoint.request!), from: nil) }
    var responseType: String { mapping.valueType(.message(endpoint.response!), from: nil) }
    var itemsField: FieldDefinition { response.fields[pagination.itemsField] }
    var itemType: String { mapping.valueType(itemsField.shape.valueType, from: nil) }
    var cursorField: FieldDefinition { request.fields[pagination.cursorField] }
    var propertyName: String { "\(endpoint.swiftName)Pagination" }
    var genericArguments: String { "\(requestType), \(responseType), \(itemType)" }

    /// The codec whose `isDefault` says a cursor is empty: an empty cursor is no cursor.
    func cursorCodec() -> String {
        if case let .scalar(scalar) = cursorField.shape.valueType { return SwiftTypeMapping.codec(scalar) }
        return "StringCodec" // the validator admits only scalar cursors
    }

    func isOptional(_ field: FieldDefinition) -> Bool {
        if case .optional = field.shape { return true }
        return false
    }

    /// `static var listChatsPagination: Pagination<…>` in the service's namespace.
    func namespaceMember() -> SwiftDeclaration {
        let codec = cursorCodec()
        let cursor = cursorField.swiftName
        let cursorText = isOptional(cursorField)
            ? "cursor: { request in request.\(cursor).flatMap { \(codec).isDefault($0) ? nil : $0.parameterText } },"
            : "cursor: { request in \(codec).isDefault(request.\(cursor)) ? nil : request.\(cursor).parameterText },"
        var next: [CodeLine] = []
        var moreName: String?
        if let more = pagination.moreField {
            let field = response.fields[more]
            // The schema's names, which the server's documentation uses, not the Swift ones.
            moreName = field.name
            next.append(.line("guard response.\(field.swiftName)\(isOptional(field) ? " == true" : "") else { return .last }"))
        }
        /// A missing cursor ends the pages, unless a `more` flag has just said more follow:
        /// then the response contradicts itself.
        func noCursor(_ why: String) -> String {
            guard let moreName else { return "return .last" }
            return "return .inconsistent(\"`\(moreName)` says more pages follow, but \(why)\")"
        }
        let source: FieldDefinition
        let owner: String
        var end = ""
        switch pagination.next {
        case let .responseField(index):
            source = response.fields[index]
            owner = "response"
        case let .firstItemField(index), let .lastItemField(index):
            guard case let .message(item) = itemsField.shape.valueType else { preconditionFailure("validated: items are messages") }
            source = schema.messages[item].fields[index]
            end = if case .firstItemField = pagination.next { "first" } else { "last" }
            next.append(.line("guard let item = response.\(itemsField.swiftName).\(end) else { \(noCursor("the page has no items to take the next cursor from")) }"))
            owner = "item"
        }
        let emptyCursor = owner == "item" ? "the page's \(end) item gives no `\(source.name)`" : "the response gives no `\(source.name)`"
        if isOptional(source) {
            next.append(.line("guard let cursor = \(owner).\(source.swiftName), !\(codec).isDefault(cursor) else { \(noCursor(emptyCursor)) }"))
        } else {
            next.append(.line("let cursor = \(owner).\(source.swiftName)"))
            next.append(.line("guard !\(codec).isDefault(cursor) else { \(noCursor(emptyCursor)) }"))
        }
        next += [.line("var next = request"), .line("next.\(cursor) = cursor"), .line("return .next(next)")]
        let body: [CodeLine] = [
            .enclosed("Pagination(", [
                .line("items: { response in response.\(itemsField.swiftName) },"),
                .line(cursorText),
                .enclosed("continuation: { request, response in", next, "}"),
            ], ")"),
        ]
        return .property(SwiftProperty(
            documentation: ["How `\(endpoint.swiftName)` pages: \(summary())."],
            access: access, isStatic: true, name: propertyName, type: "Pagination<\(genericArguments)>", getter: body))
    }

    /// The rule in words, for documentation.
    func summary() -> String {
        var parts = ["the cursor `\(cursorField.swiftName)`", "the items `\(itemsField.swiftName)`"]
        switch pagination.next {
        case let .responseField(index): parts.append("the next cursor from `\(response.fields[index].swiftName)`")
        case .firstItemField, .lastItemField:
            guard case let .message(item) = itemsField.shape.valueType else { break }
            let (end, index) = switch pagination.next {
            case let .firstItemField(index): ("first", index)
            case let .lastItemField(index): ("last", index)
            case let .responseField(index): ("", index)
            }
            parts.append("the next cursor from the \(end) item's `\(schema.messages[item].fields[index].swiftName)`")
        }
        if let more = pagination.moreField {
            parts.append("no further page when `\(response.fields[more].swiftName)` is false, and a failure when it is true without a next cursor")
        }
        return parts.joined(separator: ", ")
    }

    /// `listChatsPages(...)` and `listChatsItems(...)` for the service protocol's extension.
    func serviceMembers(keyParameters: [String], keyArguments: [String], errorType: String) -> [SwiftDeclaration] {
        var parameters = ["_ request: \(requestType) = \(requestType)()"]
        var forwarded = ["request"]
        if let limit = pagination.limitField {
            let field = request.fields[limit]
            parameters.append("pageSize: \(mapping.valueType(field.shape.valueType, from: nil))? = nil")
            forwarded.append("pageSize: pageSize")
        }
        parameters += keyParameters.map { $0 }
        parameters.append("options: CallOptions = CallOptions()")
        forwarded += keyArguments + ["options: options"]
        var body: [CodeLine] = []
        var first = "request"
        if let limit = pagination.limitField {
            // Not `first`: a key of that name is a parameter of this call.
            body.append(.line("var firstPageRequest = request"))
            body.append(.line("if let pageSize { firstPageRequest.\(request.fields[limit].swiftName) = pageSize }"))
            first = "firstPageRequest"
        }
        let call = (["request"] + keyArguments + ["options: options"]).joined(separator: ", ")
        body.append(.enclosed("return PageSequence(firstRequest: \(first), pagination: \(namespace).\(propertyName)) { request in", [
            .line("await self.\(endpoint.swiftName)(\(call))"),
        ], "}"))
        let pageSequence = "PageSequence<\(genericArguments), \(errorType)>"
        return [
            .function(SwiftFunction(
                documentation: [
                    "Every page of `\(endpoint.swiftName)`, each fetched when the sequence is iterated, from `request`'s cursor on",
                    "(none for the first page); it ends after the last page, and throws the error of the first call that fails,",
                    "`TransportError.unexpectedResponse` when the server hands out a cursor it gave before"
                        + (pagination.moreField == nil ? "," : " or a page promises more without a next cursor,"),
                    "and `TransportError.cancelled` once the iterating task is cancelled.",
                    "How pages follow: \(summary()).",
                ],
                access: access, signature: "func \(endpoint.swiftName)Pages", parameters: parameters,
                signatureSuffix: " -> \(pageSequence)", body: body)),
            .function(SwiftFunction(
                documentation: [
                    "Every item of every page of `\(endpoint.swiftName)`, in order; pages are fetched as the items run out.",
                    "Throws what the pages throw, and `TransportError.unexpectedResponse` after 100 empty pages in a row",
                    "(`\(endpoint.swiftName)Pages(...).items(maximumConsecutiveEmptyPages:)` sets another bound).",
                ],
                access: access, signature: "func \(endpoint.swiftName)Items", parameters: parameters,
                signatureSuffix: " -> PageItemSequence<\(genericArguments), \(errorType)>",
                body: [.line("\(endpoint.swiftName)Pages(\(forwarded.joined(separator: ", "))).items")])),
        ]
    }
}
