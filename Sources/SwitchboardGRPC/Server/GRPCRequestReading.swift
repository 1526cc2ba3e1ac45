import Foundation
import SwitchboardHTTP2
import SwitchboardRuntime

/// What a request's header list tells a server call: the method it names, its encoding, its
/// timeout and its metadata, or why it cannot be served.
///
/// A function of the list alone, so it is read once per distinct list: a client sends the
/// same list call after call, and the HPACK decoder's block memory hands it over as the very
/// same array (see ``GRPCRequestReadings``). A class, so a call holds it with one reference.
final class GRPCRequestReading: Sendable {
    /// What the request's path names; nil when the request is not gRPC.
    let method: GRPCMethod?
    /// The request came as `application/grpc+json`: it is transcoded for the handler, and the
    /// answer goes back as JSON.
    let isJSON: Bool
    /// Why the request cannot be served before it is read: a `grpc-timeout` it cannot read.
    let headerProblem: (status: GRPCStatusCode, message: String)?
    /// The `grpc-encoding` the client named, when not identity: a compressed message in it
    /// is UNIMPLEMENTED (uncompressed ones are still read).
    let unsupportedEncoding: String?
    /// The request is not gRPC at all (a method other than POST, a content type other than
    /// gRPC's): answered with an HTTP status a plain HTTP client understands too.
    let nonGRPCStatus: Int?
    /// The content type the answer goes out with.
    let contentTypeHeader: HPACKHeader
    /// The call's metadata: every field but pseudo-headers, `te` and gRPC's own.
    let metadata: RPCHeaders
    /// The list's size as HPACK counts it (each field's name and value, plus 32): what a
    /// call charges against `maximumRequestBytesInFlight` for its headers, since it holds
    /// their metadata (a subscription for as long as it lasts).
    let headerListSize: Int
    /// The client's `grpc-timeout`, if it sent a valid one.
    let timeout: Duration?
    /// Whether it names a method (known or not) and its headers hold no problem: its message
    /// is read (an unknown method is answered UNIMPLEMENTED by the call's `begin`).
    let isServable: Bool

    /// Reads `headers`; a path is resolved through `methods` (the connection's, on its loop).
    init(headers: [HPACKHeader], methods: GRPCMethodCache) {
        var path: String?
        var contentType: String?
        var verb: String?
        var timeout: Duration?
        var problem: (status: GRPCStatusCode, message: String)?
        var encoding: String?
        var metadata = RPCHeaders()
        metadata.reserveCapacity(headers.count)
        var listSize = 0
        // Through the array's buffer, each field read where it is: iterating the array copied
        // every field (two retains and two releases each).
        headers.withUnsafeBufferPointer { fields in
            for index in fields.indices {
                listSize += fields[index].size
                // By length first: one string comparison a header, not one for each case.
                // (A name is compared once its length and first byte agree: `==` between unequal
                // strings takes its Unicode-aware path, about 60 instructions.)
                switch fields[index].name.utf8.count {
                case 5 where fields[index].name == ":path": path = fields[index].value
                case 7 where fields[index].name == ":method": verb = fields[index].value
                case 12 where fields[index].name.leadingByte == UInt8(ascii: "c") && fields[index].name == "content-type":
                    contentType = fields[index].value
                case 12 where fields[index].name.leadingByte == UInt8(ascii: "g") && fields[index].name == "grpc-timeout":
                    timeout = GRPCTimeout.decode(fields[index].value)
                    if timeout == nil { problem = (.internal, "malformed grpc-timeout '\(fields[index].value.prefix(20))'") }
                case 13 where fields[index].name.hasBytes("grpc-encoding"):
                    if !fields[index].value.hasBytes("identity") { encoding = String(fields[index].value.prefix(40)) }
                case 2 where fields[index].name == "te":
                    break
                default:
                    // gRPC's own headers are the protocol's, not the call's metadata.
                    if !fields[index].name.isPseudoHeaderName, !fields[index].name.hasBytePrefix("grpc-") {
                        metadata.add(fields[index].name, fields[index].value)
                    }
                }
            }
        }
        self.timeout = timeout
        headerListSize = listSize
        headerProblem = problem
        unsupportedEncoding = encoding
        self.metadata = metadata
        // `application/grpc`, `application/grpc+proto` or `application/grpc+json`; parameters ignored.
        // Nearly every call says exactly `application/grpc`: only other spellings are normalized.
        let subtype = contentType.map { $0.hasBytes("application/grpc") ? $0 : Self.normalizedContentType($0) }
        isJSON = subtype?.hasBytes("application/grpc+json") ?? false
        contentTypeHeader = isJSON ? GRPCMetadata.jsonContentType : GRPCMetadata.protobufContentType
        if verb == "POST", let subtype, subtype.hasBytes("application/grpc") || subtype.hasBytes("application/grpc+proto") || isJSON,
           let path, path.leadingByte == UInt8(ascii: "/") {
            method = methods.method(forPath: path)
            nonGRPCStatus = nil
        } else {
            method = nil
            nonGRPCStatus = verb != "POST" ? 405 : 415
        }
        isServable = method != nil && problem == nil
    }

    /// A content type without parameters, trimmed and lowercased.
    static func normalizedContentType(_ value: String) -> String {
        (value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? "").trimmingCharacters(in: .whitespaces).lowercased()
    }
}
