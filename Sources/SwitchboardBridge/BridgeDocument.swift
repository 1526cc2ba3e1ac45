import Foundation
import SwitchboardDynamic
import SwitchboardRuntime

/// The JSON documents the bridge answers with. Every answer is an object whose `type` says
/// which of four it is, so a foreign core switches on one member:
///
/// - `{"type":"success","status":200,"result":{...}}`
/// - `{"type":"nonSuccess","status":404,"error":"notFound","body":{...},"retryAfterMs":1000}`:
///   an error the endpoint declares (`body` and `retryAfterMs` when it has them); an undeclared
///   4xx is `"error":"unrecognized"` with the body as `bodyBase64`.
/// - `{"type":"failure","failure":"timeout","message":"..."}`: a transport failure, shared by
///   every endpoint (``TransportError``).
/// - `{"type":"error","status":404,"error":"unknownPath","message":"..."}`: the command itself
///   could not be sent (``BridgeError``).
///
/// Pushes are `{"type":"event","service":"Messages","event":"incomingMessage","payload":{...},"headers":{...}}`,
/// a connection that ended is `{"type":"disconnected","connection":"authenticated","reason":"..."}`,
/// and a closed bridge's receive answers `{"type":"closed"}`.
enum BridgeDocument {
    static func success(status: Int, result: String?) -> String {
        "{\"type\":\"success\",\"status\":\(status),\"result\":\(result ?? "{}")}"
    }

    static func nonSuccess(status: Int, error: String, body: String?, bodyBytes: Data? = nil, retryAfter: Duration?) -> String {
        var text = "{\"type\":\"nonSuccess\",\"status\":\(status),\"error\":\(quote(error))"
        if let body { text += ",\"body\":\(body)" }
        if let bodyBytes, !bodyBytes.isEmpty { text += ",\"bodyBase64\":\(quote(bodyBytes.base64EncodedString()))" }
        if let retryAfter { text += ",\"retryAfterMs\":\(milliseconds(retryAfter))" }
        return text + "}"
    }

    static func failure(_ error: TransportError) -> String {
        var text = "{\"type\":\"failure\",\"failure\":\(quote(code(of: error))),\"message\":\(quote(error.description))"
        switch error {
        case let .retryLater(retryAfter?): text += ",\"retryAfterMs\":\(milliseconds(retryAfter))"
        case let .serverError(status): text += ",\"status\":\(status)"
        case let .grpcStatus(code, _, _): text += ",\"grpcCode\":\(code)"
        default: break
        }
        return text + "}"
    }

    static func error(_ error: BridgeError) -> String {
        "{\"type\":\"error\",\"status\":\(error.status),\"error\":\(quote(error.code.rawValue)),\"message\":\(quote(error.message))}"
    }

    static func event(service: String, event: String, payload: String?, headers: RPCHeaders) -> String {
        var text = "{\"type\":\"event\",\"service\":\(quote(service)),\"event\":\(quote(event))"
        if let payload { text += ",\"payload\":\(payload)" }
        text += ",\"headers\":{" + headers.map { "\(quote($0.name)):\(quote($0.value))" }.joined(separator: ",") + "}}"
        return text
    }

    static let closed = "{\"type\":\"closed\"}"

    static func disconnected(connection: String, reason: String) -> String {
        "{\"type\":\"disconnected\",\"connection\":\(quote(connection)),\"reason\":\(quote(reason))}"
    }

    /// The stable name of a transport failure's case.
    static func code(of error: TransportError) -> String {
        switch error {
        case .timeout: return "timeout"
        case .disconnected: return "disconnected"
        case .retryLater: return "retryLater"
        case .serverError: return "serverError"
        case .cancelled: return "cancelled"
        case .unexpectedResponse: return "unexpectedResponse"
        case .undecodableResponse: return "undecodableResponse"
        case .notConnected: return "notConnected"
        case .invalidRequest: return "invalidRequest"
        case .unroutable: return "unroutable"
        case .notStubbed: return "notStubbed"
        case .grpcStatus: return "grpcStatus"
        case .unavailable: return "unavailable"
        }
    }

    /// Whole milliseconds, saturating: a server's `Retry-After` may be any number.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        return overflowAgain ? (whole < 0 ? .min : .max) : total
    }

    /// A JSON string literal of `text`.
    static func quote(_ text: String) -> String { DynamicJSONCodec.quoted(text) }
}
