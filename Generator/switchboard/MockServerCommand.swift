import Foundation
import SwitchboardCLI
import SwitchboardChat
import SwitchboardWebSocket
import SwitchboardDynamic
import SwitchboardGRPC
import SwitchboardRuntime
import SwitchboardSchema

/// `switchboard mock-server`: serves every endpoint of a schema on a loopback port.
///
/// `--responses` is a JSON object from `Service.endpoint` to a response
/// (`{"status": 200, "body": {...}, "headers": {"Retry-After": "5"}}`) or a script of
/// responses served in turn, the last one repeating. Endpoints without one answer 200 with
/// an empty message. `--pushes` is a JSON array of `{"event": "Service.event", "payload": {...}}`
/// delivered in order to every client that connects, then "queue empty" when the schema has it.
/// `--grpc-port` serves the same endpoints and scripts over gRPC too (h2c), each endpoint as
/// the method its `rpcName` names; a client that subscribes to a service's events there
/// (`SwitchboardEvents`) gets that service's scripted pushes, in order, then "queue empty"
/// when that service declares it; a subscription to a service the schema gives no events is
/// answered UNIMPLEMENTED.
///
/// The address lines are written first, directly; the log after them (a line per call and
/// per round of pushes) goes through a ``BackgroundLineWriter``, so a reader that stops
/// reading standard output never holds up a handler: lines past its bound are dropped and
/// counted instead.
///
/// SIGTERM or SIGINT shuts the servers down gracefully (at most ``stopGrace``), writes the
/// queued log lines (at most a second), then ends the process by that signal.
enum MockServerCommand {
    static func run(_ arguments: CommandLineTool.Arguments) async throws(CommandLineTool.UsageError) -> Int32 {
        try arguments.rejectUnknown(allowed: ["--schema", "--port", "--grpc-port", "--responses", "--pushes", "--max-connections", "--idle-timeout", "--message-timeout",
                                              "--max-message-bytes", "--credentials", "--credentials-file"], flags: ["--require-credentials"])
        let requires = arguments.flags.contains("--require-credentials")
        // The variable is for `call` and `listen` too: exported in a shell, it must not stop a
        // plain mock server. Only given options without the flag are a mistake.
        let required = try ChatCommandSupport.credentials(arguments, environment: requires ? ProcessInfo.processInfo.environment : [:])
        if requires {
            guard required != nil else { throw .init("--require-credentials needs --credentials, --credentials-file or $\(ChatCommandSupport.credentialsVariable)") }
        } else if required != nil {
            throw .init("credentials are only checked with --require-credentials")
        }
        guard arguments.positional.isEmpty else { throw .init("mock-server takes no positional arguments") }
        let port = Int(arguments.options["--port"] ?? "0") ?? -1
        guard (0...65_535).contains(port) else { throw .init("--port must be 0...65535") }
        let grpcPort = try arguments.options["--grpc-port"].map { text throws(CommandLineTool.UsageError) -> Int in
            guard let value = Int(text), (0...65_535).contains(value) else { throw .init("--grpc-port must be 0...65535") }
            return value
        }
        var limits = WebSocketServer.Limits()
        if let text = arguments.options["--max-connections"] {
            guard let count = Int(text), count > 0 else { throw .init("--max-connections must be a positive number") }
            limits.maximumConnections = count
        }
        // A mock server's clients are usually the tests on the same host: no share per address.
        limits.maximumConnectionsPerAddress = limits.maximumConnections
        if let text = arguments.options["--idle-timeout"] {
            guard let seconds = Double(text), seconds >= 0, seconds <= 86_400 else { throw .init("--idle-timeout must be 0 (never) to 86400 seconds") }
            limits.idleTimeout = seconds == 0 ? nil : ChatCommandSupport.milliseconds(seconds)
        }
        if let text = arguments.options["--message-timeout"] {
            guard let seconds = Double(text), seconds >= 0, seconds <= 86_400 else { throw .init("--message-timeout must be 0 (never) to 86400 seconds") }
            limits.messageReceiveTimeout = seconds == 0 ? nil : ChatCommandSupport.milliseconds(seconds)
        }
        var connectionOptions = WebSocketConnection.Options()
        var grpcMessageSize = GRPCServerOptions().maximumReceiveMessageSize
        if let text = arguments.options["--max-message-bytes"] {
            guard let bytes = Int(text), (maximumMessageBytesRange).contains(bytes) else {
                throw .init("--max-message-bytes must be \(maximumMessageBytesRange.lowerBound)...\(maximumMessageBytesRange.upperBound)")
            }
            connectionOptions.maximumMessageSize = bytes
            grpcMessageSize = bytes
        }
        guard let schema = try ChatCommandSupport.schema(arguments) else { return 1 }
        let scripts = try arguments.options["--responses"].map { path throws(CommandLineTool.UsageError) in try loadResponses(path, schema: schema) } ?? [:]
        let pushes = try arguments.options["--pushes"].map { path throws(CommandLineTool.UsageError) in try loadPushes(path, schema: schema) } ?? []

        // Handlers only queue their lines: a full pipe must not block them (see `BackgroundLineWriter`).
        let logWriter = BackgroundLineWriter()
        var routes: [RPCRoute] = []
        for service in schema.services {
            for definition in service.endpoints {
                let name = "\(service.name).\(definition.name)"
                guard let endpoint = try? DynamicEndpoint(schema: schema, name: name) else { continue }
                let script = ResponseScript(scripts[name] ?? [defaultResponse(for: endpoint)])
                routes.append(RPCRoute(endpoint: endpoint.descriptor, message: { _, _ in
                    let response = protobufBody(script.next(), endpoint: endpoint)
                    logWriter.printLine("gRPC /\(endpoint.descriptor.rpcName) -> \(response.status) (\(name))")
                    return response
                }) { request, _ in
                    let response = script.next()
                    // The template, not the path: path values may be @sensitive.
                    logWriter.printLine("\(request.verb) \(endpoint.descriptor.pathTemplate) -> \(response.status) (\(name))")
                    return response
                })
            }
        }
        let server: ChatServer
        do {
            server = try ChatServer(routes: routes, port: port, limits: limits, connectionOptions: connectionOptions, authenticate: { authorization in
                guard let authorization else { return .anonymous }
                guard let required else { return .account }
                // Signal's server refuses credentials it does not know with 401.
                return authorization == required.authorization ? .account : .reject(status: 401, reason: "Unauthorized")
            })
        } catch {
            CommandLineTool.printError("switchboard: cannot listen on port \(port): \(error)")
            return 1
        }
        var grpcServer: GRPCServer?
        if let grpcPort {
            // The same limits as the WebSocket port: one client may take every slot (tests on
            // this host), idle connections close alike, and a request must arrive as quickly.
            var options = GRPCServerOptions()
            options.maximumConnections = limits.maximumConnections
            options.maximumConnectionsPerAddress = limits.maximumConnections
            options.http2.idleTimeout = limits.idleTimeout
            options.requestReceiveTimeout = limits.messageReceiveTimeout ?? options.maximumCallTimeout
            options.maximumReceiveMessageSize = grpcMessageSize
            // Only the schema's services with events may be subscribed to: a subscription to
            // any other is answered UNIMPLEMENTED, as a real server would.
            options.eventServices = Set(schema.services.filter { !$0.events.isEmpty }.map(\.fullName))
            options.authenticate = { headers in
                guard let authorization = headers["authorization"] else { return .none }
                guard let required else { return .account }
                return authorization == required.authorization ? .account : .none
            }
            do {
                grpcServer = try GRPCServer(router: RPCRouter(routes: routes), port: grpcPort, options: options)
            } catch {
                CommandLineTool.printError("switchboard: cannot listen on gRPC port \(grpcPort): \(error)")
                return 1
            }
        }
        // Subscribed before the address is printed, so no early client is missed.
        let arrivals = server.arrivingClients()
        let grpcSubscribers = grpcServer?.arrivingSubscribers()
        ChatCommandSupport.printLine("switchboard: mock server for \(schema.packageName) listening on \(server.url.absoluteString)")
        if let grpcServer {
            ChatCommandSupport.printLine("switchboard: gRPC (h2c) on http://127.0.0.1:\(grpcServer.port)")
        }
        // The address lines above were written directly, so they come first; from here on
        // only the writer's thread writes standard output.
        logWriter.start()
        // Stopped by SIGTERM or SIGINT (how harnesses stop it): the servers shut down
        // gracefully first (`stopGrace` at most: requests in handlers answer, WebSocket
        // clients are told 1001, gRPC ones GOAWAY, what is left then is aborted), then the
        // lines still queued are written (at most a second), so the log holds every call that
        // was answered.
        // One serial queue: a SIGTERM and a SIGINT together are handled one after the other.
        // After the flush the signal is raised again with its default action, so the process
        // ends by it (a parent sees a signal, and a shell running it in the foreground stops).
        let stopQueue = DispatchQueue(label: "switchboard.mock-server.stop")
        // Set before the shutdown ends the arrivals below, so the loop knows not to return.
        let stopping = Locked(false)
        let grpc = grpcServer
        let stopSignals = [SIGTERM, SIGINT].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: stopQueue)
            source.setEventHandler {
                stopping.withLock { $0 = true }
                let stopped = DispatchSemaphore(value: 0)
                Task {
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask { await server.shutdown(timeout: MockServerCommand.stopGrace) }
                        if let grpc { group.addTask { await grpc.shutdown(timeout: MockServerCommand.stopGrace) } }
                    }
                    stopped.signal()
                }
                // Bounded whatever the shutdown does (a second past its grace, for sockets
                // being released): the process always ends by the signal.
                _ = stopped.wait(timeout: .now() + .seconds(MockServerCommand.stopGraceSeconds + 1))
                logWriter.flush(within: 1)
                signal(number, SIG_DFL)
                var unblocked = sigset_t()
                sigemptyset(&unblocked)
                sigaddset(&unblocked, number)
                pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
                raise(number)
                _exit(128 + number)
            }
            source.resume()
            return source
        }
        defer { for source in stopSignals { source.cancel() } }
        let queueEmptyOwner = queueEmptyEvent(in: schema)
        let queueEmpty = queueEmptyOwner?.request
        let webSocketPushes = pushes.map(\.request)
        // Over gRPC each subscription is to one service's events: it gets that service's
        // pushes, in the order scripted, and "queue empty" when that service declares it.
        if let grpcSubscribers {
            let pushesByService = Dictionary(grouping: pushes, by: \.service).mapValues { $0.map(\.request) }
            Task {
                for await subscriber in grpcSubscribers {
                    let scripted = pushesByService[subscriber.service] ?? []
                    let closing = queueEmptyOwner?.service == subscriber.service ? queueEmptyOwner?.request : nil
                    // As on the WebSocket: only an account's own subscription receives its messages.
                    guard subscriber.auth == .account, !scripted.isEmpty || closing != nil else { continue }
                    Task {
                        let pass = await MockServerCommand.deliverOverGRPC(scripted, to: subscriber, queueEmpty: closing)
                        logWriter.printLine("gRPC \(subscriber.service): pushed \(scripted.count) events: \(pass.acknowledged) acknowledged, \(pass.unacknowledged) not")
                    }
                }
            }
        }
        // Serve until killed; each client gets the scripted pushes.
        for await client in arrivals {
            // Like Signal's server, only an account's own connection receives its messages.
            guard client.auth == .account, !webSocketPushes.isEmpty || queueEmpty != nil else { continue }
            Task {
                let pass = await PushQueue(webSocketPushes).deliver(to: client, queueEmpty: queueEmpty)
                logWriter.printLine("pushed \(webSocketPushes.count) events: \(pass.acknowledged) acknowledged, \(pass.unacknowledged) not")
            }
        }
        // The arrivals end when a stop signal's shutdown begins: the signal's handler ends the
        // process (by the signal, once the log is written), so this never returns an exit
        // status of its own that would race it.
        if stopping.current {
            while true { try? await Task.sleep(for: .seconds(3600)) }
        }
        withExtendedLifetime(grpcServer) {}
        logWriter.flush(within: 1)
        return 0
    }

    /// The schema's "queue empty" event (the first `queueEmpty`), as its push, with the full
    /// name of the service that declares it.
    static func queueEmptyEvent(in schema: Schema) -> (service: String, request: ServerRequest)? {
        for service in schema.services {
            if let event = service.events.first(where: { $0.name == "queueEmpty" }) {
                return (service.fullName, ServerRequest(verb: event.verb, path: event.path))
            }
        }
        return nil
    }

    /// How long a pushed event may wait for its acknowledgement (as `PushQueue`'s default).
    static let acknowledgementTimeout: Duration = .seconds(10)

    /// Delivers `pushes` to a gRPC subscriber one at a time, each after the previous one was
    /// answered (so they arrive and are handled in order), then `queueEmpty` if the
    /// subscription is still open. A push counts as acknowledged when its answer is 2xx, as
    /// `PushQueue` counts them on the WebSocket.
    static func deliverOverGRPC(_ pushes: [ServerRequest], to subscriber: GRPCEventSubscriber,
                                queueEmpty: ServerRequest?) async -> (acknowledged: Int, unacknowledged: Int) {
        var acknowledged = 0
        var unacknowledged = 0
        for push in pushes {
            let status = await subscriber.push(push, timeout: acknowledgementTimeout)
            if let status, (200..<300).contains(status) {
                acknowledged += 1
            } else {
                unacknowledged += 1
            }
        }
        if let queueEmpty, subscriber.isOpen {
            _ = await subscriber.push(queueEmpty, timeout: acknowledgementTimeout)
        }
        return (acknowledged, unacknowledged)
    }

    /// How long a stop signal's graceful shutdown may take before what is left is aborted.
    static let stopGraceSeconds = 2
    static var stopGrace: Duration { .seconds(stopGraceSeconds) }

    /// A scripted response as gRPC sends it: a success body in protobuf whatever the
    /// service's encoding (error bodies keep theirs, with their Content-Type).
    static func protobufBody(_ response: RPCResponse, endpoint: DynamicEndpoint) -> RPCResponse {
        guard response.isSuccess, endpoint.encoding == .json, let type = endpoint.endpoint.response,
              let message = try? endpoint.decode(response.body, as: type) else { return response }
        var converted = response
        converted.body = DynamicBinaryCodec(schema: endpoint.schema).encode(message)
        converted.headers.set("Content-Type", BodyEncoding.protobuf.contentType)
        return converted
    }

    /// 200 with an empty response message, or no body for endpoints that return nothing.
    static func defaultResponse(for endpoint: DynamicEndpoint) -> RPCResponse {
        guard let type = endpoint.endpoint.response else { return RPCResponse(status: 200, message: "OK") }
        return RPCResponse(status: 200, headers: ["Content-Type": endpoint.encoding.contentType],
                           body: endpoint.encode(DynamicMessage(type: type)), message: "OK")
    }

    /// What `--max-message-bytes` may be: from a control frame's 125 bytes to 256 MiB.
    static let maximumMessageBytesRange = 125...(256 << 20)

    /// The most a responses or pushes file may hold: 64 MiB.
    static let maximumScriptBytes = 64 << 20

    /// Reads a script file once, at most `maximumScriptBytes` (a FIFO or `/dev/zero` must not
    /// grow memory without end), and parses it: the JSON, and its text for error lines.
    static func loadJSON(_ path: String) throws(CommandLineTool.UsageError) -> (json: Any, text: String) {
        let data = try CommandLineTool.readFile(path, atMost: maximumScriptBytes)
        do {
            return (try JSONSerialization.jsonObject(with: data), String(decoding: data, as: UTF8.self))
        } catch {
            throw .init("cannot read \(path): \(error.localizedDescription)")
        }
    }

    /// The keys a scripted response may have.
    static let responseKeys: Set<String> = ["status", "headers", "body"]
    /// The keys a scripted push may have.
    static let pushKeys: Set<String> = ["event", "payload", "headers"]

    /// The 1-based line of the `occurrence`th (0-based) appearance of `"key"` in the file's
    /// text, for messages a person can jump to; JSONSerialization keeps no positions.
    static func line(of key: String, occurrence: Int = 0, in text: String) -> Int? {
        var remaining = occurrence
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var rest = line[...]
            while let found = rest.range(of: "\"\(key)\"") {
                if remaining == 0 { return number + 1 }
                remaining -= 1
                rest = rest[found.upperBound...]
            }
        }
        return nil
    }

    /// `path:line: ` where the line is known, else `path: `.
    static func place(_ path: String, _ line: Int?) -> String { line.map { "\(path):\($0): " } ?? "\(path): " }

    /// Reads and checks the responses file strictly: every name is an endpoint, every
    /// response an object of `status` (a number), `headers` (strings) and `body` (which must
    /// fit the endpoint's type), and nothing else; an error names the file's line.
    static func loadResponses(_ path: String, schema: Schema) throws(CommandLineTool.UsageError) -> [String: [RPCResponse]] {
        let (json, text) = try loadJSON(path)
        guard let object = json as? [String: Any] else { throw .init("\(path): expected an object of Service.endpoint names") }
        var scripts: [String: [RPCResponse]] = [:]
        for name in object.keys.sorted() {
            // Found only for an error: searching the text for every entry was quadratic.
            var at: String { place(path, line(of: name, in: text)) }
            let endpoint: DynamicEndpoint
            do throws(DynamicCodecError) {
                endpoint = try DynamicEndpoint(schema: schema, name: name)
            } catch {
                throw .init("\(at)\(error.message)")
            }
            let entries = (object[name] as? [Any]) ?? [object[name]!]
            guard !entries.isEmpty else { throw .init("\(at)\(name) has an empty script") }
            var responses: [RPCResponse] = []
            for (position, entry) in entries.enumerated() {
                do throws(DynamicCodecError) {
                    responses.append(try response(from: entry, endpoint: endpoint))
                } catch {
                    throw .init("\(at)\(name)\(entries.count > 1 ? "[\(position)]" : ""): \(error.message)")
                }
            }
            let key = endpoint.service.name + "." + endpoint.endpoint.name
            // Two spellings of one endpoint (`Service.endpoint` and `pkg.Service/Rpc`): one
            // would silently win; the loader is strict.
            guard scripts[key] == nil else { throw .init("\(at)\(name) names \(key), which another key of this file names too") }
            scripts[key] = responses
        }
        return scripts
    }

    /// `headers` as given: an object of strings.
    static func headers(from value: Any?) throws(DynamicCodecError) -> RPCHeaders {
        guard let value else { return RPCHeaders() }
        guard let object = value as? [String: Any] else { throw DynamicCodecError("\"headers\" must be an object of strings") }
        var headers = RPCHeaders()
        for (name, value) in object.sorted(by: { $0.key < $1.key }) {
            guard let text = value as? String else { throw DynamicCodecError("header \(name) must be a string") }
            headers.add(name, text)
        }
        return headers
    }

    static func response(from entry: Any, endpoint: DynamicEndpoint) throws(DynamicCodecError) -> RPCResponse {
        guard let object = entry as? [String: Any] else { throw DynamicCodecError("each response must be an object") }
        if let unknown = object.keys.sorted().first(where: { !responseKeys.contains($0) }) {
            let hint = Suggestion.closest(to: unknown, among: responseKeys.sorted()).map { "; did you mean '\($0)'?" } ?? ""
            throw DynamicCodecError("unknown key '\(unknown)'\(hint) (a response has status, headers and body)")
        }
        let status: Int
        if let given = object["status"] {
            // A number, not "404": a string must not pass for a status, nor be served as 200.
            guard !(given is String), let value = given as? Int else {
                throw DynamicCodecError("\"status\" must be a number, not \(String(reflecting: given))")
            }
            status = value
        } else {
            status = 200
        }
        guard (100...599).contains(status) else { throw DynamicCodecError("status \(status) is not an HTTP status") }
        var headers = try headers(from: object["headers"])
        var body = Data()
        if let raw = object["body"] {
            let type: Int?
            if (200..<300).contains(status) {
                type = endpoint.endpoint.response
            } else {
                type = endpoint.endpoint.errors.first { $0.status == status }?.body
            }
            guard let type else { throw DynamicCodecError("status \(status) carries no body for this endpoint") }
            let json = try JSONSerialization.dataOrNil(raw)
            body = endpoint.encode(try DynamicJSONCodec(schema: endpoint.schema).decode(json, as: type))
            headers.add("Content-Type", endpoint.encoding.contentType)
        } else if (200..<300).contains(status) {
            body = defaultResponse(for: endpoint).body
        }
        return RPCResponse(status: status, headers: headers, body: body, message: (200..<300).contains(status) ? "OK" : "Error")
    }

    /// Reads the pushes file into enveloped requests, encoded as each event's service says,
    /// each with the full name of its service (what a gRPC subscription names).
    static func loadPushes(_ path: String, schema: Schema) throws(CommandLineTool.UsageError) -> [ScriptedPush] {
        let (json, text) = try loadJSON(path)
        guard let list = json as? [Any] else { throw .init("\(path): expected an array of pushes") }
        var pushes: [ScriptedPush] = []
        for (position, entry) in list.enumerated() {
            var at: String { place(path, line(of: "event", occurrence: position, in: text)) + "push \(position): " }
            guard let object = entry as? [String: Any], let name = object["event"] as? String else {
                throw .init("\(at)each push needs \"event\": \"Service.event\"")
            }
            if let unknown = object.keys.sorted().first(where: { !pushKeys.contains($0) }) {
                let hint = Suggestion.closest(to: unknown, among: pushKeys.sorted()).map { "; did you mean '\($0)'?" } ?? ""
                throw .init("\(at)unknown key '\(unknown)'\(hint) (a push has event, payload and headers)")
            }
            let headers: RPCHeaders
            do throws(DynamicCodecError) {
                headers = try Self.headers(from: object["headers"])
            } catch {
                throw .init("\(at)\(error.message)")
            }
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let service = schema.services.first(where: { $0.name == parts[0] }),
                  let event = service.events.first(where: { $0.name == parts[1] }) else {
                throw .init("\(at)no event '\(name)' in the schema")
            }
            var body: Data?
            if let type = event.payload {
                do throws(DynamicCodecError) {
                    let json = try JSONSerialization.dataOrNil(object["payload"] ?? [String: Any]())
                    let message = try DynamicJSONCodec(schema: schema).decode(json, as: type)
                    body = service.encoding == .json ? Data(DynamicJSONCodec(schema: schema).encode(message).utf8)
                                                     : DynamicBinaryCodec(schema: schema).encode(message)
                } catch {
                    throw .init("\(at)\(error.message)")
                }
            }
            pushes.append(ScriptedPush(service: service.fullName, request: ServerRequest(verb: event.verb, path: event.path, headers: headers, body: body)))
        }
        return pushes
    }
}

/// A scripted push and the service whose event it is, `package.Service`.
struct ScriptedPush: Sendable {
    let service: String
    let request: ServerRequest
}

/// Serves a script of responses in turn; the last one repeats.
final class ResponseScript: @unchecked Sendable {
    private let responses: [RPCResponse]
    private let position = Locked(0)

    init(_ responses: [RPCResponse]) { self.responses = responses }

    func next() -> RPCResponse {
        let index = position.withLock { value -> Int in
            defer { value = min(value + 1, responses.count - 1) }
            return value
        }
        return responses[index]
    }
}

extension JSONSerialization {
    /// Re-serializes a parsed JSON fragment so the schema-driven reader can take it.
    static func dataOrNil(_ object: Any) throws(DynamicCodecError) -> Data {
        do {
            return try data(withJSONObject: object, options: [.fragmentsAllowed])
        } catch {
            throw DynamicCodecError("cannot re-encode JSON: \(error.localizedDescription)")
        }
    }
}
