// Stand-ins for the parts of Apple's Security framework that IO/NetworkTLSStream.swift uses,
// with Apple's signatures (checked against its documentation), so scripts/compile-tests.sh
// can type-check that Apple-only file on Linux. They do nothing; they are never linked.
import Foundation
public typealias OSStatus = Int32
public typealias CFString = NSString
public typealias CFData = NSData
public typealias CFArray = NSArray
public typealias CFIndex = Int
public final class CFError: @unchecked Sendable {}
public final class SecTrust {}
public final class SecPolicy {}
public final class SecCertificate {}
public final class sec_protocol_options_t { public init() {} }
public final class sec_protocol_metadata_t { public init() {} }
public final class sec_trust_t {}
public typealias sec_protocol_verify_complete_t = (Bool) -> Void
public typealias sec_protocol_verify_t = (sec_protocol_metadata_t, sec_trust_t, @escaping sec_protocol_verify_complete_t) -> Void
public func sec_protocol_options_set_verify_block(_ options: sec_protocol_options_t, _ verify_block: @escaping sec_protocol_verify_t, _ verify_block_queue: DispatchQueue) {}
public func sec_protocol_options_set_tls_server_name(_ options: sec_protocol_options_t, _ server_name: UnsafePointer<CChar>) {}
/// Apple's TLS versions, by their wire values.
public enum tls_protocol_version_t: UInt16 {
    case TLSv10 = 0x0301, TLSv11 = 0x0302, TLSv12 = 0x0303, TLSv13 = 0x0304, DTLSv10 = 0xFEFF, DTLSv12 = 0xFEFD
}
public func sec_protocol_options_set_min_tls_protocol_version(_ options: sec_protocol_options_t, _ version: tls_protocol_version_t) {}
public func sec_protocol_options_add_tls_application_protocol(_ options: sec_protocol_options_t, _ application_protocol: UnsafePointer<CChar>) {}
public func sec_trust_copy_ref(_ trust: sec_trust_t) -> Unmanaged<SecTrust> { fatalError() }
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: AnyObject) -> OSStatus { 0 }
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy { SecPolicy() }
public func SecCertificateCreateWithData(_ allocator: AnyObject?, _ data: CFData) -> SecCertificate? { nil }
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray) -> OSStatus { 0 }
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus { 0 }
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool { false }
public func CFErrorCopyDescription(_ err: CFError!) -> CFString! { nil }
public func CFErrorGetCode(_ err: CFError!) -> CFIndex { 0 }
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? { nil }
public func SecCertificateCopyNormalizedSubjectSequence(_ certificate: SecCertificate) -> CFData? { nil }
public func SecCertificateCopyNormalizedIssuerSequence(_ certificate: SecCertificate) -> CFData? { nil }
public var errSecCertificateExpired: OSStatus { -67818 }
public var errSecCertificateNotValidYet: OSStatus { -67819 }
public var errSecHostNameMismatch: OSStatus { -67602 }
public var errSecNotTrusted: OSStatus { -67843 }
public func sec_protocol_metadata_get_negotiated_protocol(_ metadata: sec_protocol_metadata_t) -> UnsafePointer<CChar>? { nil }
