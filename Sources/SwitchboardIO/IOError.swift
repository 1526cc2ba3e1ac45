import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An operating-system call failed.
public enum IOError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `call` failed with `errno`.
    case system(String, Int32)
    /// The loop has shut down and takes no more work.
    case shutDown

    public var description: String {
        switch self {
        case let .system(call, code): return "\(call) failed: \(String(cString: strerror(code)))"
        case .shutDown: return "the event loop has shut down"
        }
    }
}
