import Foundation
import SwitchboardHTTPSyntax

extension ProtoMessage {
    /// Decodes a body in `encoding`.
    @inlinable
    public init(decoding body: Data, encoding: BodyEncoding) throws {
        switch encoding {
        case .protobuf: try self.init(serializedBytes: body)
        case .json: try self.init(jsonUTF8Bytes: body, options: JSONDecodingOptions(ignoreUnknownFields: true))
        }
    }

    /// Encodes the message as a body in `encoding`.
    @inlinable
    public func encodedBody(_ encoding: BodyEncoding) throws(TransportError) -> Data {
        switch encoding {
        case .protobuf:
            return serializedData()
        case .json:
            do throws(JSONEncodingError) {
                return Data(try jsonUTF8Bytes())
            } catch {
                throw .invalidRequest("\(Self.protoMessageName) cannot be written as JSON: \(error)")
            }
        }
    }
}

extension RPCResponse {
    /// A 200 "OK" response carrying `message`; a 500 if the message cannot be written in
    /// `encoding` (a timestamp JSON cannot express, say), never a 200 with an empty body the
    /// client would read as something else.
    @inlinable
    public static func ok(_ message: some ProtoMessage, encoding: BodyEncoding) -> RPCResponse {
        do throws(TransportError) {
            return RPCResponse(status: 200, headers: encoding.contentTypeHeaders, body: try message.encodedBody(encoding), message: "OK")
        } catch {
            return RPCResponse(status: 500, message: "the response cannot be written: \(error)")
        }
    }

    /// A 200 "OK" response with no body, for endpoints that return nothing.
    public static var ok: RPCResponse { RPCResponse(status: 200, message: "OK") }

    /// An error response with an optional message body.
    public static func error(status: Int, body: (some ProtoMessage)?, encoding: BodyEncoding, headers: RPCHeaders = [:]) -> RPCResponse {
        var headers = headers
        var data = Data()
        if let body {
            headers.add("Content-Type", encoding.contentType)
            do throws(TransportError) {
                data = try body.encodedBody(encoding)
            } catch {
                return RPCResponse(status: 500, message: "the error body cannot be written: \(error)")
            }
        }
        return RPCResponse(status: status, headers: headers, body: data)
    }

    /// Decodes an error body for a declared status; failures are transport errors.
    public func decodeErrorBody<M: ProtoMessage>(_ type: M.Type, encoding: BodyEncoding) throws(TransportError) -> M {
        do {
            return try M(decoding: body, encoding: encoding)
        } catch {
            throw .undecodableResponse("status \(status) body is not \(M.protoMessageName): \(error)")
        }
    }
}

/// Server-side binding of path, query and header text to request fields.
public enum ServerBinding {
    /// The value of path parameter `name`, decoded as `T`.
    @inlinable
    public static func path<T: ParameterValue>(_ name: String, in context: ServerContext, as type: T.Type) throws(RequestBindingError) -> T {
        guard let raw = context.pathParameters[name], let text = PathEncoding.percentDecode(raw[...]), let value = T(parameterText: text) else {
            throw RequestBindingError("path parameter '\(name)' is missing or malformed")
        }
        return value
    }

    /// The value of query parameter `name`, or `nil` when absent. A singular field given
    /// twice is an error: proxies and servers disagree on which copy wins, so either choice
    /// lets one layer check a value another layer does not use.
    @inlinable
    public static func query<T: ParameterValue>(_ name: String, in context: ServerContext, as type: T.Type) throws(RequestBindingError) -> T? {
        var found: String?
        for item in context.query where item.name == name {
            guard found == nil else { throw RequestBindingError("query parameter '\(name)' is given more than once") }
            found = item.value
        }
        guard let text = found else { return nil }
        guard let value = T(parameterText: text) else { throw RequestBindingError("query parameter '\(name)' is malformed") }
        return value
    }

    /// Every value of query parameter `name`, for list fields.
    @inlinable
    public static func queryList<T: ParameterValue>(_ name: String, in context: ServerContext, as type: T.Type) throws(RequestBindingError) -> [T] {
        var values: [T] = []
        for text in context.queryValues(name) {
            guard let value = T(parameterText: text) else { throw RequestBindingError("query parameter '\(name)' is malformed") }
            values.append(value)
        }
        return values
    }

    /// The value of header `name`, or `nil` when absent; given more than once, or holding
    /// NUL, CR or LF (which no client sends: ``RPCHeaders/checkSendable()``), an error.
    @inlinable
    public static func header<T: ParameterValue>(_ name: String, in context: ServerContext, as type: T.Type) throws(RequestBindingError) -> T? {
        guard let text = try context.headers.onlyValue(name) else { return nil }
        // Such a value, once stored or passed on, can split into more than one header.
        guard !holdsNULCROrLF(text) else { throw RequestBindingError("header '\(name)' holds NUL, CR or LF") }
        guard let value = T(parameterText: text) else { throw RequestBindingError("header '\(name)' is malformed") }
        return value
    }

    /// Decodes the request body, if any, as `M`.
    @inlinable
    public static func body<M: ProtoMessage>(_ request: ServerRequest, as type: M.Type, encoding: BodyEncoding) throws(RequestBindingError) -> M {
        guard let body = request.body, !body.isEmpty else { return M() }
        do {
            return try M(decoding: body, encoding: encoding)
        } catch {
            throw RequestBindingError("the body is not a valid \(M.protoMessageName)")
        }
    }

    /// The whole request message, as gRPC carries it (binary protobuf).
    @inlinable
    public static func message<M: ProtoMessage>(_ body: Data, as type: M.Type) throws(RequestBindingError) -> M {
        do {
            return try M(serializedBytes: body)
        } catch {
            throw RequestBindingError("the request is not a valid \(M.protoMessageName)")
        }
    }

    /// Whether `text` holds NUL, CR or LF; outside the inlinable code, which then needs no
    /// import of `SwitchboardHTTPSyntax` where it is inlined.
    @usableFromInline
    static func holdsNULCROrLF(_ text: String) -> Bool { HTTPSyntax.hasNULCROrLF(text) }

    /// The 400 response for a request that could not be bound.
    public static func badRequest(_ error: RequestBindingError) -> RPCResponse {
        RPCResponse(status: 400, body: Data(error.description.utf8), message: "Bad Request")
    }
}
