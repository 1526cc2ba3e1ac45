import Foundation
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// A small service in, exact Swift out, for the parts of service translation that matter most.
@Suite struct ServiceSnippetTests {
    static let schema = """
        package demo
        message Req { 1 id: string  @sensitive 2 token: bytes  3 limit: uint32  4 note: string }
        message Resp { 1 text: string }
        message Problem { 1 reason: string }
        key apiKey: header "X-Api-Key" string
        errors Common { 429 rateLimited(retryAfter) }
        /// Things.
        service Things {
          auth none
          encoding json
          /// Gets a thing.
          rpc getThing(Req) -> Resp {
            PUT "/v1/things/{id}/{token}?limit={limit}"
            errors Common
            error 404 notFound
            error 422 invalid(Problem) grpc INVALID_ARGUMENT
            keys apiKey
            timeout 500ms
            idempotent
          }
        }
        """

    func file(_ name: String) throws -> String {
        let output = SchemaCompiler.compile(files: [SourceFile(path: "snippet.sb", text: Self.schema)])
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        let files = SwiftEmitter.generate(schema, options: SwiftEmitterOptions())
        return try #require(files.first { $0.path == name }?.contents)
    }

    @Test func protocolDocumentsRouteAndErrors() throws {
        #expect(try file("ThingsService.swift").contains("""
            public protocol ThingsService: Sendable {
                /// Gets a thing.
                ///
                /// - Route: `PUT /v1/things/{id}/{token}?limit={limit}` (`demo.Things/GetThing`)
                /// - Errors: 404 `notFound`, 422 `invalid`, 429 `rateLimited`
                /// - Keys: `ApiKey`
                /// - Timeout: 500 ms unless the call sets one.
                /// - Idempotent: safe to retry.
                func getThing(_ request: Req, apiKey: ApiKey, options: CallOptions) async -> RequestResult<Resp, Things.GetThingError>
            }
            """))
    }

    @Test func clientBuildsPathQueryHeadersAndBody() throws {
        #expect(try file("ThingsService.swift").contains("""
                public func getThing(_ request: Req, apiKey: ApiKey, options: CallOptions) async -> RequestResult<Resp, Things.GetThingError> {
                    var path = "/v1/things/" + PathEncoding.percentEncode(request.id.parameterText) + "/" + PathEncoding.percentEncode(request.token.parameterText)
                    var logSafePath = "/v1/things/" + PathEncoding.percentEncode(request.id.parameterText) + "/" + "[REDACTED]"
                    var query: [String] = []
                    var logSafeQuery: [String] = []
                    if !UInt32Codec.isDefault(request.limit) {
                        query.append("limit=" + PathEncoding.percentEncode(request.limit.parameterText))
                        logSafeQuery.append("limit=" + PathEncoding.percentEncode(request.limit.parameterText))
                    }
                    if !query.isEmpty { path += "?" + query.joined(separator: "&") }
                    if !logSafeQuery.isEmpty { logSafePath += "?" + logSafeQuery.joined(separator: "&") }
                    var headers: RPCHeaders = ["Accept": BodyEncoding.json.contentType]
                    headers.add(ApiKey.headerName, apiKey.headerValue)
                    var bodyMessage = request
                    bodyMessage.id = ""
                    bodyMessage.token = Data()
                    bodyMessage.limit = 0
            """))
    }

    @Test func errorTypeMapsStatusesBothWays() throws {
        let text = try file("ThingsService.swift")
        #expect(text.contains("""
                    public init?(response: RPCResponse, encoding: BodyEncoding) throws(TransportError) {
                        switch response.status {
                        case 404: self = .notFound
                        case 422: self = .invalid(try response.decodeErrorBody(Problem.self, encoding: encoding))
                        case 429: self = .rateLimited(retryAfter: response.retryAfter())
                        default: return nil
                        }
                    }
            """))
        #expect(text.contains("case rateLimited(retryAfter: Duration?)"))
        #expect(text.contains("case unrecognized(status: Int, body: Data)"))
    }

    @Test func deprecationAndDefaultsReachTheDescriptor() throws {
        let output = SchemaCompiler.compile(files: [SourceFile(path: "d.sb", text: """
            package demo
            service Old {
              auth account
              @deprecated
              rpc ping() { GET "/v1/ping" }
            }
            """)])
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        let text = try #require(SwiftEmitter.generate(schema, options: SwiftEmitterOptions()).first { $0.path == "OldService.swift" }?.contents)
        #expect(text.contains("public static let ping = EndpointDescriptor(rpcName: \"demo.Old/Ping\", verb: \"GET\", pathTemplate: \"/v1/ping\", auth: .account, isDeprecated: true)"))
        #expect(text.contains("/// - Note: Deprecated in the schema."))
        #expect(text.contains("public init(transport: any RPCTransport<Authenticated>)"))
    }

    @Test func descriptorsNameTheirBodyTypesAndClientsTakeInterceptors() throws {
        let text = try file("ThingsService.swift")
        #expect(text.contains("""
            public static let getThing = EndpointDescriptor(rpcName: "demo.Things/GetThing", verb: "PUT", pathTemplate: "/v1/things/{id}/{token}?limit={limit}", auth: .none, isIdempotent: true, defaultTimeout: .milliseconds(500), requestBodyType: Req.self, responseBodyType: Resp.self, errorStatusByGRPCCode: [3: 422, 5: 404, 8: 429], encoding: .json, requestType: Req.self)
            """))
        #expect(text.contains("""
                public init(transport: any RPCTransport<Unauthenticated>, interceptors: [any ClientInterceptor]) {
                    self.transport = interceptors.isEmpty ? transport : InterceptedTransport(transport, interceptors: interceptors)
                }
            """))
        // Routes through the namespace stay unambiguous for a type serving several services.
        #expect(text.contains("""
            extension Things {
                /// The routes of every endpoint, bound to `handler`; unambiguous when one type serves several services.
                public static func routes(_ handler: some ThingsHandler) -> [RPCRoute] {
                    handler.routes
                }
            }
            """))
    }

    /// A GET whose request has no fields binds nothing into it: `let`, or Swift warns that
    /// it is never mutated (from the emitter review).
    @Test func aRequestWithNothingToBindIsALet() throws {
        let text = """
            package demo
            message Nothing {}
            message Resp { 1 text: string }
            service Idle {
              auth none
              rpc ping(Nothing) -> Resp { GET "/v1/ping" }
            }
            """
        let output = SchemaCompiler.compile(files: [SourceFile(path: "idle.sb", text: text)])
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        let service = try #require(SwiftEmitter.generate(schema, options: SwiftEmitterOptions()).first { $0.path == "IdleService.swift" }?.contents)
        #expect(service.contains("let message = Nothing()"), "\(service)")
        #expect(!service.contains("var message = Nothing()"))
    }

    /// Keys go in `Credentials.swift`, headed by the schema file that declares them; beside a
    /// type named `Credentials`, in `Credentials+Keys.swift`, a name no type can have.
    @Test func keysHaveAFileOfTheirOwn() throws {
        let text = "package p\nmessage A { 1 x: string }\n"
        let keys = "package p\nmessage CREDENTIALS { 1 x: string }\nkey token: header \"X-Token\" base64\nkey session: header \"Authorization\" bearer\n"
        let output = SchemaCompiler.compile(files: [SourceFile(path: "a.sb", text: text), SourceFile(path: "keys.sb", text: keys)])
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        let files = SwiftEmitter.generate(schema, options: SwiftEmitterOptions())
        // Beside a type whose file differs only in case (one file on macOS) too.
        #expect(files.map(\.path).sorted() == ["A.swift", "CREDENTIALS.swift", "Credentials+Keys.swift"])
        let keyFile = try #require(files.first { $0.path == "Credentials+Keys.swift" })
        #expect(keyFile.contents.hasPrefix("// Generated by switchboard \(SwiftTranslator.generatorVersion) from keys.sb"), "\(keyFile.contents.prefix(120))")
        // A bearer key reads the scheme's name in any case (RFC 7235).
        #expect(keyFile.contents.contains("guard headerValue.prefix(7).lowercased() == \"bearer \" else { return nil }"))
    }

    @Test func credentialsAreRedacted() throws {
        let text = try file("Credentials.swift")
        #expect(text.contains("public struct ApiKey: RequestKey, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {"))
        #expect(text.contains("\"ApiKey([REDACTED])\""))
        // `dump` and `Mirror` see no children at all.
        #expect(text.contains("Mirror(self, children: [(label: String?, value: Any)](), displayStyle: .struct)"))
    }

    /// Nothing bound to headers: the call starts from the runtime's shared list and hands the
    /// request over without a copy.
    @Test func clientWithoutHeaderBindingsSharesItsHeaders() throws {
        let schema = """
            package demo
            message Note { 1 id: string  2 text: string }
            message Key { 1 id: string }
            message Ack { 1 ok: bool }
            service Notes {
              auth none
              rpc putNote(Note) -> Ack { PUT "/v1/notes/{id}" }
              rpc getAck(Key) -> Ack { GET "/v1/acks/{id}" }
            }
            """
        let output = SchemaCompiler.compile(files: [SourceFile(path: "notes.sb", text: schema)])
        let compiled = try #require(output.schema, "\(output.renderedDiagnostics)")
        let files = SwiftEmitter.generate(compiled, options: SwiftEmitterOptions())
        let service = try #require(files.first { $0.path == "NotesService.swift" }?.contents)
        #expect(service.contains("""
                    let headers = BodyEncoding.protobuf.requestHeaders(withBody: true)
                    var bodyMessage = request
                    bodyMessage.id = ""
                    let rpcRequest = RPCRequest(endpoint: Notes.putNote, path: path, logSafePath: path, headers: headers, protobufBody: bodyMessage, message: request)
                    return await RPCCall.perform(consume rpcRequest, over: transport,
            """))
        #expect(service.contains("let headers = BodyEncoding.protobuf.requestHeaders(withBody: false)"))
        #expect(!service.contains("headers.add(\"Content-Type\""))
    }
}
