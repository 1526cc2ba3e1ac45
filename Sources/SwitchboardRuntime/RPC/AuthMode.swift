/// Who a connection speaks for. Transports and generated clients carry it as a type
/// parameter, so using a service through the wrong kind of connection does not compile.
public protocol AuthMode: Sendable {
    /// The requirement this mode satisfies, for runtime checks on the server side.
    static var requirement: AuthRequirement { get }
}

/// A connection that carries the account's credentials.
public enum Authenticated: AuthMode {
    public static var requirement: AuthRequirement { .account }
}

/// A connection without account credentials; requests may carry per-request keys.
public enum Unauthenticated: AuthMode {
    public static var requirement: AuthRequirement { .none }
}

/// What a service requires of the connection it is called through.
public enum AuthRequirement: String, Sendable, Hashable {
    /// The authenticated connection only.
    case account
    /// The unauthenticated connection only.
    case none
}
