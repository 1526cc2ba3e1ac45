import SwitchboardHTTP2
import SwitchboardRuntime

/// What every request header block of one transport shares (scheme, authority, gRPC's own
/// headers, the transport's metadata), worked out once; a call adds its path, deadline and
/// metadata.
struct GRPCRequestHead: Sendable {
    let authority: String
    private let scheme: HPACKHeader
    private let authorityHeader: HPACKHeader
    private let fixed: [HPACKHeader]
    /// The last lists built, sent again as the same arrays.
    private let recent = GRPCRecentRequestLists()

    init(host: String, port: Int, options: GRPCClientOptions) {
        authority = options.authority ?? (host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]:\(port)" : "\(host):\(port)")
        scheme = HPACKHeader(":scheme", options.tls == nil ? "http" : "https")
        authorityHeader = HPACKHeader(":authority", authority)
        fixed = [HPACKHeader("te", "trailers"), HPACKHeader("user-agent", options.userAgent)] + GRPCMetadata.requestMetadata(options.metadata)
    }


    /// A call's request headers: pseudo-headers, gRPC's own, then metadata.
    func headers(path: String, deadline: ContinuousClock.Instant?, metadata: RPCHeaders, json: Bool = false) -> [HPACKHeader] {
        headers(path: path, deadline: deadline, metadata: metadata, sharedMetadata: GRPCSharedHeaderLists.requestMetadata(of: metadata), json: json)
    }

    /// The same, for a caller that has looked `metadata` up among the shared lists already:
    /// `sharedMetadata` is what that lookup gave (nil for a list of the call's own).
    func headers(path: String, deadline: ContinuousClock.Instant?, metadata: RPCHeaders, sharedMetadata: [HPACKHeader]?,
                 json: Bool = false) -> [HPACKHeader] {
        let timeout = deadline.map { GRPCTimeout.encode($0 - .now) }
        // Only lists every call of a kind shares are kept: a call's own metadata is its own.
        guard let sharedMetadata else { return build(path: path, timeout: timeout, metadata: metadata, sharedMetadata: nil, json: json) }
        if let list = recent.list(path: path, timeout: timeout, metadata: sharedMetadata, json: json) { return list }
        let list = build(path: path, timeout: timeout, metadata: metadata, sharedMetadata: sharedMetadata, json: json)
        return recent.keep(list, path: path, timeout: timeout, metadata: sharedMetadata, json: json)
    }

    private func build(path: String, timeout: String?, metadata: RPCHeaders, sharedMetadata: [HPACKHeader]?, json: Bool) -> [HPACKHeader] {
        var headers: [HPACKHeader] = []
        headers.reserveCapacity(fixed.count + 7 + metadata.fields.count)
        // One append each: an array literal here would be an allocation of its own.
        headers.append(HPACKHeader(":method", "POST"))
        headers.append(scheme)
        headers.append(HPACKHeader(":path", path))
        headers.append(authorityHeader)
        headers.append(json ? GRPCMetadata.jsonContentType : GRPCMetadata.protobufContentType)
        headers += fixed
        if let timeout {
            headers.append(HPACKHeader("grpc-timeout", timeout, indexing: .never))
        }
        if let sharedMetadata {
            headers += sharedMetadata
        } else if !metadata.fields.isEmpty {
            GRPCMetadata.appendRequestMetadata(metadata, to: &headers)
        }
        return headers
    }
}
