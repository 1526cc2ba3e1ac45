/// What can happen to a session: the app's requests (login, logout, dismiss...), the
/// outcomes of its login and socket, the retry timer, and the device's reachability.
public enum SessionEvent: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case loginUncached = "LOGIN_UNCACHED"
    case loginCached = "LOGIN_CACHED"
    case noUser = "NO_USER"
    case userCreated = "USER_CREATED"
    case cancel = "CANCEL"
    case dismiss = "DISMISS"
    case ready = "READY"
    case socketConnected = "SOCKET_CONNECTED"
    case socketDropped = "SOCKET_DROPPED"
    case temporaryFailure = "TEMPORARY_FAILURE"
    case permanentFailure = "PERMANENT_FAILURE"
    case retry = "RETRY"
    case deviceOffline = "DEVICE_OFFLINE"
    case deviceOnline = "DEVICE_ONLINE"
    case logout = "LOGOUT"

    public var description: String { rawValue }
}
