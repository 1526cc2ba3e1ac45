/// What a registered descriptor is watched for, and what it turned out ready for.
package struct IOInterest: OptionSet, Sendable, Hashable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Bytes (or a connection, or the end of the stream) to read.
    package static let read = IOInterest(rawValue: 1)
    /// Room to write.
    package static let write = IOInterest(rawValue: 2)
}
