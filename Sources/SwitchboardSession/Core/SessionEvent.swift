/// What can happen to a session: the app's requests (login, logout, dismiss...), the
/// outcomes of its login and socket, the retry timer, and the device's reachability.
public enum SessionEvent: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The app asks to log in without stored credentials, so its login runs.
    case loginUncached = "LOGIN_UNCACHED"
    /// The app logs in with stored credentials and connects straight away.
    case loginCached = "LOGIN_CACHED"
    /// The account has no user yet, so onboarding follows.
    case noUser = "NO_USER"
    /// The new account chose its username; the login runs again.
    case userCreated = "USER_CREATED"
    /// The user left onboarding.
    case cancel = "CANCEL"
    /// The user dismissed the permanent error.
    case dismiss = "DISMISS"
    /// The old client is disposed of and a new one is ready.
    case ready = "READY"
    /// The socket opened.
    case socketConnected = "SOCKET_CONNECTED"
    /// An open socket ended or stopped answering; handled as `TEMPORARY_FAILURE`.
    case socketDropped = "SOCKET_DROPPED"
    /// The login or a connect failed in a way a retry may fix.
    case temporaryFailure = "TEMPORARY_FAILURE"
    /// The login or a connect failed in a way no retry will fix.
    case permanentFailure = "PERMANENT_FAILURE"
    /// The retry timer fired.
    case retry = "RETRY"
    /// The device lost its network.
    case deviceOffline = "DEVICE_OFFLINE"
    /// The device has a network again.
    case deviceOnline = "DEVICE_ONLINE"
    /// The app logs out; accepted in any logged-in state.
    case logout = "LOGOUT"

    public var description: String { rawValue }
}
