/// The typed SDK for the sample Signal-style chat server.
///
/// Everything under `Generated/` comes from `schema/` through
/// `switchboard generate schema --output Sources/SignalChat/Generated`; do not
/// edit it by hand. `swift test` fails when it is stale.
public enum SignalChatSchema {
    /// The schema package the SDK was generated from.
    public static let packageName = "signal.chat"
}
