/// Wraps every request the server pushes to a client, around the app's listener: logging,
/// metrics. It sees what the listener made of the push, including pushes whose payload did
/// not decode (``EventOutcome/reject(_:reason:)``), which no listener sees.
public protocol PushInterceptor: Sendable {
    /// Handles one push; `next` passes it on to the next interceptor, and after the last one
    /// to the listener's dispatcher. The outcome says how the push is answered.
    func intercept(
        _ push: ServerRequest,
        next: @Sendable (ServerRequest) async -> EventOutcome
    ) async -> EventOutcome
}
