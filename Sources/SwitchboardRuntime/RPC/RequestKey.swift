import Foundation

/// A credential an endpoint takes in a header (a schema `key`, such as `AccessKey`): generated
/// key types conform, so a server reads one with ``ServerContext/key(_:)``.
public protocol RequestKey: Sendable, Hashable {
    /// The header the credential travels in.
    static var headerName: String { get }
    /// The header's value.
    var headerValue: String { get }
    /// The credential a header value carries, or nil when it is not one (bad base64, a
    /// bearer value without `Bearer `).
    init?(headerValue: String)
}

extension ServerContext {
    /// The request's `K`, decoded from its header; nil when the header is absent, given more
    /// than once, or malformed. A handler answers its endpoint's 401 (or other declared
    /// error) for nil.
    public func key<K: RequestKey>(_ type: K.Type) -> K? {
        guard let text = try? headers.onlyValue(K.headerName) else { return nil }
        return K(headerValue: text)
    }
}
