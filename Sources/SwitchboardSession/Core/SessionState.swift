/// Where a session is. The logged-out states run the login flow; the logged-in states keep
/// the socket up. The set and its transitions follow Revolt's session lifecycle.
public enum SessionState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    // Logged out.
    /// Waiting for a login; the login form shows.
    case ready = "READY"
    /// The app's login runs, then the socket opens.
    case loggingIn = "LOGGING_IN"
    /// A new account is choosing its username.
    case onboarding = "ONBOARDING"
    /// The login or the session failed; the error shows until dismissed.
    case error = "ERROR"
    /// The client is being replaced before the session returns to READY.
    case dispose = "DISPOSE"
    // Logged in.
    /// Opening the socket for the logged-in account.
    case connecting = "CONNECTING"
    /// The socket is up.
    case connected = "CONNECTED"
    /// The socket failed; the retry timer runs.
    case disconnected = "DISCONNECTED"
    /// Opening a new socket, caches dropped.
    case reconnecting = "RECONNECTING"
    /// The device has no network; no retry until it is back.
    case offline = "OFFLINE"

    /// Whether the account is logged in (the client UI shows, perhaps with a banner).
    public var isLoggedIn: Bool {
        switch self {
        case .connecting, .connected, .disconnected, .reconnecting, .offline: return true
        case .ready, .loggingIn, .onboarding, .error, .dispose: return false
        }
    }

    /// What the UI should show in this state.
    public var uiHint: SessionUIHint {
        switch self {
        case .ready: return .loginForm
        case .loggingIn, .dispose: return .loadingIndicator
        case .onboarding: return .usernameSelection
        case .error: return .permanentError
        case .connected: return .clientUI(banner: nil)
        case .connecting: return .clientUI(banner: .connecting)
        case .disconnected: return .clientUI(banner: .disconnected)
        case .reconnecting: return .clientUI(banner: .reconnecting)
        case .offline: return .clientUI(banner: .deviceOffline)
        }
    }

    public var description: String { rawValue }
}

/// The screen a state calls for, so apps drive their UI from the session alone.
public enum SessionUIHint: Sendable, Hashable {
    /// The login form.
    case loginForm
    /// A loading indicator (logging in, or replacing the client).
    case loadingIndicator
    /// Username selection for a new account.
    case usernameSelection
    /// A permanent error with a dismiss button.
    case permanentError
    /// The client UI, with a connection banner unless connected.
    case clientUI(banner: SessionBanner?)
}

/// The connection banner over the client UI.
public enum SessionBanner: String, Sendable, Hashable, CaseIterable {
    /// Shown while CONNECTING.
    case connecting = "Connecting"
    /// Shown while DISCONNECTED, until the retry timer fires.
    case disconnected = "Disconnected"
    /// Shown while RECONNECTING.
    case reconnecting = "Reconnecting"
    /// Shown while OFFLINE.
    case deviceOffline = "Device offline"

    /// The banner's text.
    public var text: String { rawValue }
}
