// Stand-ins for the parts of Apple's Network framework that IO/NetworkTLSStream.swift uses,
// with Apple's signatures (checked against its documentation), so scripts/compile-tests.sh
// can type-check that Apple-only file on Linux. They do nothing; they are never linked.
import Foundation
import Security
public enum NWError: Error, Sendable { case posix(POSIXErrorCode), dns(Int32), tls(OSStatus) }
public enum NWEndpoint: Sendable {
    public struct Host: Sendable { public init(_ string: String) {} }
    public struct Port: Sendable { public init?(rawValue: UInt16) {} }
}
public final class NWProtocolDefinition: @unchecked Sendable {}
open class NWProtocolMetadata: @unchecked Sendable {}
public enum NWProtocolTLS {
    public final class Options { public init() {}; public var securityProtocolOptions: sec_protocol_options_t { sec_protocol_options_t() } }
    public static let definition = NWProtocolDefinition()
    public final class Metadata: NWProtocolMetadata, @unchecked Sendable { public var securityProtocolMetadata: sec_protocol_metadata_t { sec_protocol_metadata_t() } }
}
public enum NWProtocolTCP {
    public final class Options { public init() {}; public var noDelay: Bool = false }
}
public final class NWParameters: @unchecked Sendable { public init(tls: NWProtocolTLS.Options?, tcp: NWProtocolTCP.Options = .init()) {} }
public final class NWConnection: @unchecked Sendable {
    public enum State: Sendable { case setup, waiting(NWError), preparing, ready, failed(NWError), cancelled }
    public final class ContentContext: @unchecked Sendable { public static let defaultMessage = ContentContext() }
    public enum SendCompletion: Sendable { case contentProcessed(@Sendable (NWError?) -> Void), idempotent }
    public init(host: NWEndpoint.Host, port: NWEndpoint.Port, using: NWParameters) {}
    @preconcurrency public var stateUpdateHandler: (@Sendable (State) -> Void)?
    public func start(queue: DispatchQueue) {}
    public func cancel() {}
    public func metadata(definition: NWProtocolDefinition) -> NWProtocolMetadata? { nil }
    public func receive(minimumIncompleteLength: Int, maximumLength: Int, completion: @escaping @Sendable (Data?, ContentContext?, Bool, NWError?) -> Void) {}
    public func send(content: Data?, contentContext: ContentContext = .defaultMessage, isComplete: Bool = true, completion: SendCompletion) {}
}
