import Foundation
import SwitchboardRuntime

/// The documents of the file-drop protocol: a request (`<id>.request.json`) and its
/// response (`<id>.response.json`), JSON (so YAML too) that a person can read. Bodies in
/// JSON are written inline; protobuf bodies as base64.
///
/// A request's life is told by its file names in the endpoint's folder: `<id>.request.json`
/// (submitted), `<id>.claimed.json` (a provider took it), `<id>.served.json` with
/// `<id>.response.json` (answered). Hidden `.….tmp` files are documents still being written.
enum FileDropDocument {
    static let requestSuffix = ".request.json"
    static let claimedSuffix = ".claimed.json"
    static let servedSuffix = ".served.json"
    static let responseSuffix = ".response.json"
    /// A request its consumer gave up on before any provider took it: never served.
    static let withdrawnSuffix = ".withdrawn.json"
    /// Every state suffix a request's document names take.
    static let stateSuffixes = [requestSuffix, claimedSuffix, servedSuffix, responseSuffix, withdrawnSuffix]
    /// The longest request id, in UTF-8 bytes: 240, so that every name of the request's
    /// documents, the longest (`.withdrawn.json`) included, fits in a file name (255 bytes on
    /// common file systems). A consumer's new ids stay within it; a provider leaves a longer
    /// one unclaimed, since its consumer could not withdraw it.
    static let maximumIDBytes = 255 - stateSuffixes.reduce(0) { max($0, $1.utf8.count) }
    /// Where a consumer moves the documents of a request it has read the answer of, so the
    /// folders a provider polls hold only what is still in progress.
    static let archiveFolder = ".archive"
    /// The response document's member marking the answer to a request whose provider stopped
    /// while serving it: it is never served again, so the caller learns it may or may not
    /// have taken effect. A member of the document, not a header, so no handler's answer
    /// can pass for it.
    static let interruptedMember = "interrupted"
    /// How the previous format marked it, written beside the member for older consumers.
    static let legacyInterruptedHeader = "Switchboard-Interrupted"

    struct Request {
        var id: String
        var spec: String
        var rpcName: String
        var version: Int?
        var verb: String
        var path: String
        var headers: RPCHeaders
        var body: Data?
        /// The kind of connection the endpoint needs.
        var auth: AuthRequirement = .none
    }

    static func encode(_ request: Request) throws -> Data {
        var object: [String: Any] = [
            "id": request.id, "spec": request.spec, "rpc": request.rpcName, "verb": request.verb, "path": request.path,
            "headers": headersObject(request.headers),
        ]
        if let version = request.version { object["version"] = version }
        object["auth"] = request.auth == .account ? "account" : "none"
        addBody(request.body, headers: request.headers, to: &object)
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }

    static func decodeRequest(_ data: Data) -> Request? {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let id = object["id"] as? String, let spec = object["spec"] as? String, let rpcName = object["rpc"] as? String,
              let verb = object["verb"] as? String, let path = object["path"] as? String else { return nil }
        // A malformed member fails the document rather than vanishing: a header dropped could
        // be its Content-Type, a version read as absent would skip the version check.
        guard let headers = headers(from: object["headers"]), let body = body(from: object) else { return nil }
        let version = object["version"]
        guard version == nil || version is Int else { return nil }
        return Request(id: id, spec: spec, rpcName: rpcName, version: version as? Int, verb: verb, path: path, headers: headers, body: body,
                       auth: object["auth"] as? String == "account" ? .account : .none)
    }

    static func encode(_ response: RPCResponse, id: String, interrupted: Bool = false) throws -> Data {
        var object: [String: Any] = ["id": id, "status": response.status, "headers": headersObject(response.headers)]
        if interrupted { object[interruptedMember] = true }
        if let message = response.message { object["message"] = message }
        addBody(response.body.isEmpty ? nil : response.body, headers: response.headers, to: &object)
        return try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    }

    /// The response, and whether it is the answer of an interrupted request.
    static func decodeResponse(_ data: Data) -> (response: RPCResponse, interrupted: Bool)? {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any], let status = object["status"] as? Int,
              let headers = headers(from: object["headers"]), let body = body(from: object) else { return nil }
        let interrupted = object[interruptedMember]
        guard interrupted == nil || interrupted is Bool else { return nil }
        return (RPCResponse(status: status, headers: headers, body: body ?? Data(), message: object["message"] as? String),
                interrupted as? Bool ?? false)
    }

    static func headersObject(_ headers: RPCHeaders) -> [[String]] { headers.map { [$0.name, $0.value] } }

    /// The `[[name, value], ...]` list (absent: none), or `nil` if any entry is not a pair of strings.
    static func headers(from value: Any?) -> RPCHeaders? {
        guard let value else { return RPCHeaders() }
        guard let pairs = value as? [Any] else { return nil }
        var headers = RPCHeaders()
        for pair in pairs {
            guard let strings = pair as? [String], strings.count == 2 else { return nil }
            headers.add(strings[0], strings[1])
        }
        return headers
    }

    /// A JSON body inline (`body`), anything else as `bodyBase64`.
    static func addBody(_ body: Data?, headers: RPCHeaders, to object: inout [String: Any]) {
        guard let body else { return }
        if headers["Content-Type"].flatMap(BodyEncoding.init(contentType:)) == .json,
           let parsed = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) {
            object["body"] = parsed
        } else {
            object["bodyBase64"] = body.base64EncodedString()
        }
    }

    /// `.some(nil)` for no body, `nil` for a malformed one.
    static func body(from object: [String: Any]) -> Data?? {
        if let inline = object["body"] {
            guard let data = try? JSONSerialization.data(withJSONObject: inline, options: [.fragmentsAllowed, .withoutEscapingSlashes]) else { return nil }
            return .some(data)
        }
        if let encoded = object["bodyBase64"] {
            guard let text = encoded as? String, let data = Data(base64Encoded: text) else { return nil }
            return .some(data)
        }
        return .some(nil)
    }
}
