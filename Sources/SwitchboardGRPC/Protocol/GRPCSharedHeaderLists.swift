import SwitchboardHTTP2
import SwitchboardRuntime

/// The header lists generated calls and handlers share (``BodyEncoding``'s `Accept` and
/// `Content-Type` lists), with what each contributes as gRPC metadata worked out once. A call
/// carrying one of them, recognised by its storage, skips the per-header checks and lowering:
/// about 1,500 instructions a call (both sides) for lists whose every name the transport drops.
enum GRPCSharedHeaderLists {
    struct Entry: Sendable {
        let headers: RPCHeaders
        /// nil when the list could not be sent as request metadata (never for the shared lists).
        let requestMetadata: [HPACKHeader]?
        let responseMetadata: [HPACKHeader]
    }

    /// Each list with its metadata, made by the per-call functions themselves.
    static func entries(for lists: [RPCHeaders]) -> [Entry] {
        lists.map { headers in
            let sendable = (try? GRPCMetadata.checkSendable(headers)) != nil
            return Entry(headers: headers, requestMetadata: sendable ? GRPCMetadata.requestMetadata(headers) : nil,
                         responseMetadata: GRPCMetadata.responseMetadata(headers))
        }
    }

    /// The entry whose list is `headers` itself (not merely an equal list), if any.
    static func entry(for headers: RPCHeaders, in entries: [Entry]) -> Entry? {
        for entry in entries where entry.headers.sharesStorage(with: headers) { return entry }
        return nil
    }

    private static let shared = entries(for: [BodyEncoding.protobuf, .json].flatMap { encoding in
        [encoding.requestHeaders(withBody: true), encoding.requestHeaders(withBody: false), encoding.contentTypeHeaders]
    })

    /// A request's metadata when its headers are a shared list that passes
    /// ``GRPCMetadata/checkSendable(_:)``; nil for any other list, which takes the full path.
    static func requestMetadata(of headers: RPCHeaders) -> [HPACKHeader]? {
        entry(for: headers, in: shared)?.requestMetadata
    }

    /// A response's metadata when its headers are a shared list; nil for any other list.
    static func responseMetadata(of headers: RPCHeaders) -> [HPACKHeader]? {
        entry(for: headers, in: shared)?.responseMetadata
    }
}
