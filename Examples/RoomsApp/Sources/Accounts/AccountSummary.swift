import Foundation
import SwitchboardRuntime

// The generated `Account` is internal here (switchboard-config.json sets the access level):
// the module exposes only what it chooses to.

/// A line that introduces an account, built from the generated message.
public func accountSummary(handle: String, displayName: String) -> String {
    let account = Account(handle: handle, displayName: displayName, createdAt: ProtoTimestamp(date: Date(timeIntervalSince1970: 0)))
    let decoded = try? Account(serializedBytes: account.serializedBytes())
    return "\(decoded?.displayName ?? "?") (@\(decoded?.handle ?? "?"))"
}
