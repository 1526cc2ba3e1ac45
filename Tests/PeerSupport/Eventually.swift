/// Polls `condition` every 10 ms until it holds or `timeout` passes, and returns its last value:
/// for state that another thread settles (a connection leaving, a socket being released).
public func eventually(within timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
