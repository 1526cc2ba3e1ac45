/// `key name: header "Header-Name" base64|string|bearer` — a per-request credential.
public struct KeySyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var header: Token?
    public var form: NameSyntax?
    public var documentation: [String]
}

/// `errors Name { 404 notFound  429 rateLimited(retryAfter)  422 invalid(ValidationError) }`
public struct ErrorSetSyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var cases: [ErrorCaseSyntax]
    public var documentation: [String]
}

/// `404 notFound(Body, retryAfter) grpc NOT_FOUND`
public struct ErrorCaseSyntax: Sendable, Hashable {
    public var status: IntegerSyntax
    public var name: NameSyntax
    /// Message type names or `retryAfter`.
    public var bindings: [NameSyntax]
    /// The gRPC status code name the error travels as over gRPC, if given.
    public var grpcCode: NameSyntax?
    public var documentation: [String]
}

/// `service Name { auth none  rpc ...  event ... }`
public struct ServiceSyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var documentation: [String]
    public var attributes: [AttributeSyntax]
    /// `auth`, `version`, `status`, `encoding` settings.
    public var settings: [SettingSyntax]
    public var endpoints: [EndpointSyntax]
    public var events: [EventSyntax]
}

/// A `keyword value...` line inside a service, endpoint or event body.
public struct SettingSyntax: Sendable, Hashable {
    public var keyword: NameSyntax
    public var values: [Token]
}

/// `rpc name(Request) -> Response { GET "/path"  ... }`
public struct EndpointSyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var request: [NameSyntax]?
    public var response: [NameSyntax]?
    public var documentation: [String]
    public var attributes: [AttributeSyntax]
    /// The verb and path template line.
    public var route: (verb: NameSyntax, path: Token)?
    public var settings: [SettingSyntax]
    /// `error <status> <name>(...)` lines.
    public var errors: [ErrorCaseSyntax]

    public static func == (lhs: EndpointSyntax, rhs: EndpointSyntax) -> Bool {
        lhs.name == rhs.name && lhs.request == rhs.request && lhs.response == rhs.response
            && lhs.route?.verb == rhs.route?.verb && lhs.route?.path == rhs.route?.path && lhs.settings == rhs.settings
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(route?.path)
    }
}

/// `event name(Payload) { PUT "/path"  ack afterHandling }`
public struct EventSyntax: Sendable, Hashable {
    public var name: NameSyntax
    public var payload: [NameSyntax]?
    public var documentation: [String]
    public var route: (verb: NameSyntax, path: Token)?
    public var settings: [SettingSyntax]

    public static func == (lhs: EventSyntax, rhs: EventSyntax) -> Bool {
        lhs.name == rhs.name && lhs.payload == rhs.payload && lhs.route?.path == rhs.route?.path && lhs.settings == rhs.settings
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(route?.path)
    }
}
