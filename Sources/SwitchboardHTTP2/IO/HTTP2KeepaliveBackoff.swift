import Foundation
import SwitchboardIO

/// How much longer than configured a client waits between keepalive PINGs: doubled each
/// time a server ends a connection with GOAWAY `too_many_pings` (gRFC A8), and shared by
/// every connection of one client, so the next connection does not repeat the offence.
package final class HTTP2KeepaliveBackoff: @unchecked Sendable {
    private let lock = AdaptiveLock()
    private var multiplier = 1

    package init() {}

    /// The factor the configured interval is multiplied by.
    package var factor: Int { lock.withLock { multiplier } }

    /// Doubles the factor, up to 1,024 times the configured interval.
    package func double() { lock.withLock { multiplier = min(multiplier * 2, 1024) } }
}
