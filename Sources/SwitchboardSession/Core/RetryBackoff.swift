import SwitchboardRuntime

/// The session backoff moved to SwitchboardRuntime, where the retry interceptor uses it too;
/// this keeps code that imports only SwitchboardSession compiling.
public typealias RetryBackoff = SwitchboardRuntime.RetryBackoff
