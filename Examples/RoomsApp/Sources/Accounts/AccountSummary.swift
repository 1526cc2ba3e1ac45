import Foundation
import RoomsAPI
import SwitchboardRuntime

// The generated `Account` is internal here (switchboard-config.json sets the access level):
// the module exposes only what it chooses to.

/// A line that introduces an account, built from the generated message; its favourite room is
/// a `RoomsAPI.Room`, a type of the package the accounts schema imports.
public func accountSummary(handle: String, displayName: String, favoriteRoom: Room? = nil) -> String {
    let account = Account(handle: handle, displayName: displayName, createdAt: ProtoTimestamp(date: Date(timeIntervalSince1970: 0)),
                          favoriteRoom: favoriteRoom)
    let decoded = try? Account(serializedBytes: account.serializedBytes())
    let line = "\(decoded?.displayName ?? "?") (@\(decoded?.handle ?? "?"))"
    guard let room = decoded?.favoriteRoom else { return line }
    return line + ", likes \(room.title)"
}
