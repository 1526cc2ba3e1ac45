import SwitchboardHTTP2
import SwitchboardRuntime

/// The header lists generated calls and handlers share (``BodyEncoding``'s `Accept` and
/// `Content-Type` lists), with what each contributes as gRPC metadata worked out once. A call
/// carrying one of them, recognised by its storage, skips the per-header checks and lowering:
/// about a thousand instructions a call for lists whose every name the transport drops.
enum GRPCSharedHeaderLists {
    private struct Entry: Sendable {
        let headers: RPCHeaders
        /// nil when the list could not be sent as request metadata (never for these lists).
        let requestMetadata: [HPACKHeader]?
        let responseMetadata: [HPACKHeader]
    }

    private static let entries: [Entry] = [BodyEncoding.protobuf, .json].flatMap { encoding in
        [encoding.requestHeaders(withBody: true), encoding.requestHeaders(withBody: false), encoding.contentTypeHeaders]
    }.map { headers in
        let sendable = (try? GRPCMetadata.checkSendable(headers)) != nil
        return Entry(headers: headers, requestMetadata: sendable ? GRPCMetadata.requestMetadata(headers) : nil,
                     responseMetadata: GRPCMetadata.responseMetadata(headers))
    }

    /// A request's metadata when its headers are a shared list that passes
    /// ``GRPCMetadata/checkSendable(_:)``; nil for any other list, which takes the full path.
    static func requestMetadata(of headers: RPCHeaders) -> [HPACKHeader]? {
        for entry in entries where entry.headers.sharesStorage(with: headers) { return entry.requestMetadata }
        return nil
    }

    /// A response's metadata when its headers are a shared list; nil for any other list.
    static func responseMetadata(of headers: RPCHeaders) -> [HPACKHeader]? {
        for entry in entries where entry.headers.sharesStorage(with: headers) { return entry.responseMetadata }
        return nil
    }
}
