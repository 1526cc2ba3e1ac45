import Foundation
import SwitchboardHTTP2
import SwitchboardHTTPSyntax
import SwitchboardRuntime

/// Reads a finished gRPC call as the response the generated code expects.
enum GRPCResponseMapping {
    /// Trailers a Switchboard server adds to a failure so its client gets the exact declared
    /// error: the HTTP-like status, and the error's body (base64, as `-bin` metadata).
    static let statusTrailer = "switchboard-status"
    static let errorBodyTrailer = "switchboard-error-body-bin"
    /// gRPC's rich error status (a serialized `google.rpc.Status`, base64 on the wire): the one
    /// `grpc-` name kept among the metadata a caller gets, as gRPC's Java and Python clients
    /// keep it among the trailing metadata, so it survives an error the endpoint declares
    /// (`ResponseCapture.grpcStatusDetails`) as it does an undeclared status's `details`.
    static let statusDetailsTrailer = "grpc-status-details-bin"

    /// Whether a response's content type is gRPC's: `application/grpc`, alone or with a
    /// `+subtype` or parameters (not `application/grpc-web`, another protocol).
    static func isGRPCContentType(_ contentType: String) -> Bool {
        contentType.hasBytes("application/grpc") || contentType.hasBytePrefix("application/grpc+") || contentType.hasBytePrefix("application/grpc;")
    }

    /// Whether response headers are exactly `:status 200` and `content-type: application/grpc`,
    /// what nearly every answer to a protobuf call begins with: read without a scan.
    static func isPlainProtobufHead(_ headers: [HPACKHeader]) -> Bool {
        headers.count == 2 && headers.withUnsafeBufferPointer { fields in
            HTTPSyntax.sameBytes(fields[0].name, ":status") && HTTPSyntax.sameBytes(fields[0].value, "200")
                // (Short strings, usually equal by representation; the content type is longer
                // and never the same string as a constant here, so its bytes are compared.)
                && HTTPSyntax.sameBytes(fields[1].name, "content-type") && fields[1].value.hasBytes("application/grpc")
        }
    }

    /// Whether trailers are exactly `grpc-status: 0`: success, with no message or metadata.
    static func isPlainOKTrailers(_ trailers: [HPACKHeader]) -> Bool {
        trailers.count == 1 && trailers.withUnsafeBufferPointer { fields in
            HTTPSyntax.sameBytes(fields[0].name, "grpc-status") && HTTPSyntax.sameBytes(fields[0].value, "0")
        }
    }

    /// Whether response headers begin a gRPC response: status 200 and gRPC's content type.
    static func beginsGRPCResponse(_ headers: [HPACKHeader]) -> Bool {
        if isPlainProtobufHead(headers) { return true }
        let head = FirstValues(headers)
        return head[":status"] == "200" && head["content-type"].map(isGRPCContentType) == true
    }

    /// `sentJSON`: the request went as `application/grpc+json`; a response whose content type
    /// names no subtype (what gRPC's C core always sends) is then JSON too.
    static func response(for call: GRPCCallResponse, endpoint: EndpointDescriptor, sentJSON: Bool = false,
                         capture: ResponseCapture? = nil) throws(TransportError) -> RPCResponse {
        // The answer nearly every protobuf call gets: one message, no metadata. What the
        // reading below makes of it, without its scans.
        if !sentJSON, !call.isTrailersOnly, call.messageCount == 1, let body = call.message,
           isPlainProtobufHead(call.headers), isPlainOKTrailers(call.trailers) {
            return RPCResponse(status: 200, headers: BodyEncoding.protobuf.contentTypeHeaders, body: body, message: "OK", trailers: RPCHeaders())
        }
        // A few fields each: a scan costs less than building dictionaries.
        let head = FirstValues(call.headers), trailers = FirstValues(call.trailers)
        // Nearly always the static table's `200`, the very string compared with.
        let httpStatus = head[":status"].flatMap { $0 == "200" ? 200 : Int($0) } ?? 0
        // Not a gRPC response at all (a proxy's or load balancer's page): a transport failure
        // with gRPC's code for the HTTP status (http-grpc-status-mapping.md), never the
        // endpoint's declared error for that status (a proxy's 404 is not "no such username").
        // A 429 or 503 with Retry-After is `retryLater` with its delay, as on the WebSocket
        // path. Its body is the proxy's, not the endpoint's, and is not read.
        guard httpStatus == 200 else {
            if httpStatus == 429 || httpStatus == 503 {
                var headers = RPCHeaders()
                for header in call.headers where header.name == "retry-after" { headers.add("Retry-After", header.value) }
                if let delay = RPCResponse(status: httpStatus, headers: headers, body: Data(), message: "").retryAfter() { throw .retryLater(retryAfter: delay) }
            }
            let code = (100...599).contains(httpStatus) ? GRPCStatusCode(httpStatus: httpStatus) : .unknown
            throw .grpcStatus(code: code.rawValue, message: "HTTP status \(httpStatus) instead of a gRPC response", details: nil)
        }
        // An error from here on still came with metadata (a request id, say): the caller's
        // capture keeps it, whatever the error. gRPC's own fields are not metadata, except the
        // status details, which the caller's capture keeps even when the status becomes a
        // declared error (whose typed value has no room for them).
        let isMetadata = { (header: HPACKHeader) in
            !header.name.isPseudoHeaderName && !header.name.hasBytePrefix("switchboard-")
                && (!header.name.hasBytePrefix("grpc-") || HTTPSyntax.sameBytes(header.name, Self.statusDetailsTrailer))
        }
        func failing(_ error: TransportError) -> TransportError {
            if let capture {
                let (all, trailing) = Self.metadata(of: call, isMetadata: isMetadata)
                capture.record(status: nil, headers: all, trailers: trailing)
            }
            return error
        }
        guard let contentType = head["content-type"], isGRPCContentType(contentType) else {
            throw failing(.grpcStatus(code: GRPCStatusCode.unknown.rawValue, message: "content-type \(head["content-type"] ?? "missing"), not application/grpc", details: nil))
        }
        guard let statusText = trailers["grpc-status"], let rawCode = statusText == "0" ? 0 : Int(statusText) else {
            throw failing(.grpcStatus(code: GRPCStatusCode.unknown.rawValue, message: "the response ended without a valid grpc-status", details: nil))
        }
        // A code this side does not know is UNKNOWN, as gRPC's own clients read it.
        guard let code = GRPCStatusCode(rawValue: rawCode) else {
            throw failing(.grpcStatus(code: GRPCStatusCode.unknown.rawValue,
                                      message: "grpc-status \(rawCode): " + (trailers["grpc-message"].map(GRPCMetadata.decodeMessage) ?? ""), details: nil))
        }
        let message = trailers["grpc-message"].map(GRPCMetadata.decodeMessage) ?? ""
        if code == .ok {
            guard call.messageCount == 1, let body = call.message else {
                throw failing(.grpcStatus(code: GRPCStatusCode.internal.rawValue, message: "a unary call answered with \(call.messageCount) messages", details: nil))
            }
            let json = contentType.hasBytePrefix("application/grpc+json") || (sentJSON && contentType.hasBytes("application/grpc"))
            // Most answers carry no metadata: their headers are shared, not built.
            var metadata = (json ? BodyEncoding.json : BodyEncoding.protobuf).contentTypeHeaders
            // (Its own content-type is replaced below, so it does not count.)
            let carriesMetadata = { (header: HPACKHeader) in isMetadata(header) && header.name != "content-type" }
            var trailing = RPCHeaders()
            if call.headers.contains(where: carriesMetadata) || call.trailers.contains(where: carriesMetadata) {
                (metadata, trailing) = Self.metadata(of: call, isMetadata: isMetadata)
                metadata.set("Content-Type", json ? BodyEncoding.json.contentType : BodyEncoding.protobuf.contentType)
            }
            return RPCResponse(status: 200, headers: metadata, body: body, message: "OK", trailers: trailing)
        }
        var (metadata, trailing) = Self.metadata(of: call, isMetadata: isMetadata)
        // Also among the trailers handed on (`metadata(of:isMetadata:)`), for a declared error.
        let details = trailers[statusDetailsTrailer].flatMap(GRPCMetadata.decodeBinary)
        // The exact declared error, from a Switchboard server.
        if let exact = trailers[statusTrailer].flatMap({ Int($0) }), (300...599).contains(exact) {
            let body = trailers[errorBodyTrailer].flatMap(GRPCMetadata.decodeBinary) ?? Data()
            if let type = trailers["switchboard-content-type"] { metadata.set("Content-Type", type) }
            return RPCResponse(status: exact, headers: metadata, body: body, message: message, trailers: trailing)
        }
        // A declared error by its gRPC code.
        if let status = endpoint.errorStatusByGRPCCode[code.rawValue] {
            return RPCResponse(status: status, headers: metadata, body: Data(), message: message, trailers: trailing)
        }
        switch code {
        case .deadlineExceeded: throw failing(.timeout)
        // CANCELLED from the server stays its status: `.cancelled` means this caller cancelled.
        default: throw failing(.grpcStatus(code: code.rawValue, message: message, details: details))
        }
    }
}

extension GRPCResponseMapping {
    /// The call's metadata: all of it (initial, then trailing) as the response's headers, and
    /// the trailing part alone. A trailers-only response's one block counts once, as trailers.
    static func metadata(of call: GRPCCallResponse, isMetadata: (HPACKHeader) -> Bool) -> (all: RPCHeaders, trailing: RPCHeaders) {
        var all = RPCHeaders()
        var trailing = RPCHeaders()
        all.reserveCapacity(call.headers.count + call.trailers.count + 1)
        if !call.isTrailersOnly {
            for header in call.headers where isMetadata(header) { all.add(header.name, header.value) }
        }
        for header in call.trailers where isMetadata(header) {
            all.add(header.name, header.value)
            trailing.add(header.name, header.value)
        }
        return (all, trailing)
    }
}

/// The first value of each name in a header list.
private struct FirstValues {
    let headers: [HPACKHeader]
    init(_ headers: [HPACKHeader]) { self.headers = headers }
    subscript(name: String) -> String? { headers.first { HTTPSyntax.sameBytes($0.name, name) }?.value }
}
