import Foundation
import SwitchboardChat
import SwitchboardGRPC
import SwitchboardRuntime
import SwitchboardSchema
import SwitchboardWebSocket

/// What `switchboard_open` reads: the schema, the connections to open, and the limits.
public struct BridgeConfiguration: Sendable {
    /// Which transport requests ride.
    public enum Transport: String, Sendable {
        /// The Signal-style chat connection (RFC 6455 WebSocket, requests in the envelope).
        case websocket
        /// gRPC over HTTP/2: each endpoint the unary method its `rpcName` names.
        case grpc
    }

    /// The schema's directory.
    public var schemaDirectory: URL
    /// Schemas the schema imports, as `--import-path` takes them (`dir` or `dir=Module`).
    public var importPaths: [SchemaCompiler.ImportPath] = []
    /// The transport requests ride: the WebSocket unless the configuration says `"grpc"`.
    public var transport: Transport = .websocket
    /// `ws(s)://host:port/path` for the WebSocket, `http(s)://host:port` for gRPC.
    public var url: URL
    /// When given, the authenticated connection is opened too (and receives the pushes).
    public var credentials: ChatClient.Credentials?
    /// How long opening may take: 10 s.
    public var connectTimeout: Duration = .seconds(10)
    /// The bridge's limits.
    public var options = StringBridge.Options()

    /// The longest configuration text read: 64 KiB.
    public static let maximumConfigurationBytes = 64 * 1024

    /// Parses the JSON configuration (see `switchboard.h`).
    public init(json: Data) throws(BridgeError) {
        guard json.count <= Self.maximumConfigurationBytes else {
            throw BridgeError(.tooLarge, "the configuration is larger than \(Self.maximumConfigurationBytes) bytes")
        }
        guard let object = (try? JSONSerialization.jsonObject(with: json)) as? [String: Any] else {
            throw BridgeError(.badJSON, "the configuration is not a JSON object")
        }
        let known: Set<String> = ["schema", "importPaths", "transport", "url", "credentials", "connectTimeoutMs", "requestTimeoutMs", "maxRequestBytes", "maxRequestHeadBytes",
                                  "maxHeaderLines", "maxQueuedEvents", "maxQueuedEventBytes"]
        if let unknown = object.keys.filter({ !known.contains($0) }).sorted().first {
            throw BridgeError(.badConfiguration, "unknown configuration member '\(unknown)'")
        }
        guard let schema = object["schema"] as? String, !schema.isEmpty else { throw BridgeError(.badConfiguration, "'schema' names the schema's directory") }
        schemaDirectory = URL(fileURLWithPath: schema)
        if let paths = object["importPaths"] {
            guard let list = paths as? [String] else { throw BridgeError(.badConfiguration, "'importPaths' is a list of strings") }
            for entry in list {
                let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                guard let directory = parts.first, !directory.isEmpty, parts.count == 1 || !parts[1].isEmpty else {
                    throw BridgeError(.badConfiguration, "an import path is 'dir' or 'dir=Module'")
                }
                importPaths.append(SchemaCompiler.ImportPath(directory: URL(fileURLWithPath: directory), swiftModule: parts.count > 1 ? parts[1] : nil))
            }
        }
        if let name = object["transport"] {
            guard let text = name as? String, let parsed = Transport(rawValue: text) else { throw BridgeError(.badConfiguration, "'transport' is \"websocket\" or \"grpc\"") }
            transport = parsed
        }
        let schemes: Set<String> = transport == .websocket ? ["ws", "wss"] : ["http", "https"]
        guard let text = object["url"] as? String, let url = URL(string: text), schemes.contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw BridgeError(.badConfiguration, "'url' is a \(schemes.sorted().joined(separator: " or ")) URL for the \(transport.rawValue) transport")
        }
        if let problem = URLAuthority.problem(in: text) { throw BridgeError(.badConfiguration, "'url': \(problem)") }
        self.url = url
        if let credentials = object["credentials"] {
            guard let text = credentials as? String, let colon = text.firstIndex(of: ":"), let dot = text[..<colon].lastIndex(of: "."),
                  let device = UInt32(text[text.index(after: dot)..<colon]) else {
                throw BridgeError(.badConfiguration, "'credentials' has the form 'user.device:password'")
            }
            self.credentials = ChatClient.Credentials(username: String(text[..<dot]), deviceID: device, password: String(text[text.index(after: colon)...]))
        }
        // A whole number within `range` (milliseconds, bytes or a count).
        func milliseconds(_ name: String, range: ClosedRange<Int>) throws(BridgeError) -> Int? {
            guard let value = object[name] else { return nil }
            guard let number = value as? Int, range.contains(number) else {
                throw BridgeError(.badConfiguration, "'\(name)' is a number from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        if let value = try milliseconds("connectTimeoutMs", range: 1...600_000) { connectTimeout = .milliseconds(value) }
        if let value = try milliseconds("requestTimeoutMs", range: 1...3_600_000) { options.requestTimeout = .milliseconds(value) }
        if let value = try milliseconds("maxRequestBytes", range: 1...(64 << 20)) { options.maxRequestBytes = value }
        if let value = try milliseconds("maxRequestHeadBytes", range: 1_024...(16 << 20)) { options.maxRequestHeadBytes = value }
        if let value = try milliseconds("maxHeaderLines", range: 1...10_000) { options.maxHeaderLines = value }
        if let value = try milliseconds("maxQueuedEvents", range: 1...1_000_000) { options.maxQueuedEvents = value }
        if let value = try milliseconds("maxQueuedEventBytes", range: 65_536...(16 << 30)) { options.maxQueuedEventBytes = value }
    }
}

extension StringBridge {
    /// Compiles the configuration's schema, opens its connections, and returns the bridge
    /// that owns them: over the WebSocket, the unauthenticated connection and (with
    /// credentials) the authenticated one, whose pushes fill the queue; over gRPC, one channel
    /// of each kind and an event subscription for every service with events.
    public static func open(_ configuration: BridgeConfiguration) async throws(BridgeError) -> StringBridge {
        let output = SchemaCompiler.compile(directory: configuration.schemaDirectory, importPaths: configuration.importPaths)
        guard let schema = output.schema else {
            throw BridgeError(.badConfiguration, "the schema does not compile:\n" + output.renderedDiagnostics)
        }
        // The push handler needs the bridge, which needs the connections; a push may come as
        // soon as a connection opens, so it waits for the bridge rather than being dropped.
        // Held weakly: the connections keep their push handler for their whole life, and the
        // bridge holds the connections, so a strong reference here would keep a closed bridge
        // (and its connections) alive for ever.
        let target = Eventual<WeakReference<StringBridge>>()
        let onPush: @Sendable (ServerRequest) async -> EventOutcome = { push in
            guard let reference = await target.wait else { return .withhold(reason: "the bridge did not open") }
            guard let bridge = reference.value else { return .withhold(reason: "the bridge is closed") }
            return await bridge.deliver(push)
        }
        let bridge: StringBridge
        switch configuration.transport {
        case .websocket:
            var options = ChatConnectionOptions(connectTimeout: configuration.connectTimeout)
            if let timeout = configuration.options.requestTimeout { options.defaultRequestTimeout = timeout }
            let anonymous: ChatConnection<Unauthenticated>
            var account: ChatConnection<Authenticated>?
            do throws(ChatConnectionError) {
                anonymous = try await ChatClient.connectUnauthenticated(to: configuration.url, options: options, onPush: onPush)
                if let credentials = configuration.credentials {
                    do throws(ChatConnectionError) {
                        account = try await ChatClient.connectAuthenticated(to: configuration.url, credentials: credentials, options: options, onPush: onPush)
                    } catch {
                        // Resolved first: a push handler already waiting for the bridge would
                        // otherwise hold the close for its whole grace.
                        target.resolve(nil)
                        await anonymous.close()
                        throw error
                    }
                }
            } catch {
                target.resolve(nil)
                throw BridgeError(.notConnected, "cannot connect to \(configuration.url.host ?? "the server"): \(error)")
            }
            bridge = StringBridge(schema: schema, transports: Transports(unauthenticated: anonymous, authenticated: account),
                                  options: configuration.options) { [account] in
                await anonymous.close()
                await account?.close()
            }
            target.resolve(WeakReference(bridge))
            // A connection that ends (the server went away, or cut off a host that stopped
            // taking events) is an event of its own, so the host can reopen the bridge.
            Task { [weak bridge] in
                let reason = await anonymous.waitUntilFinished()
                bridge?.connectionEnded("unauthenticated", reason: "\(reason)")
            }
            if let account {
                Task { [weak bridge] in
                    let reason = await account.waitUntilFinished()
                    bridge?.connectionEnded("authenticated", reason: "\(reason)")
                }
            }
        case .grpc:
            var options = GRPCClientOptions()
            if configuration.url.scheme?.lowercased() == "https" { options.tls = TLSOptions() }
            options.connectTimeout = configuration.connectTimeout
            if let timeout = configuration.options.requestTimeout { options.defaultRequestTimeout = timeout }
            let host = configuration.url.host ?? "127.0.0.1"
            let port = configuration.url.port ?? (options.tls == nil ? 80 : 443)
            let anonymous = GRPCClientTransport<Unauthenticated>(host: host, port: port, options: options)
            var account: GRPCClientTransport<Authenticated>?
            if let credentials = configuration.credentials {
                var accountOptions = options
                accountOptions.metadata.add("Authorization", credentials.authorization)
                account = GRPCClientTransport<Authenticated>(host: host, port: port, options: accountOptions)
            }
            let subscriptions = Locked<[GRPCEventSubscription]>([])
            bridge = StringBridge(schema: schema, transports: Transports(unauthenticated: anonymous, authenticated: account),
                                  options: configuration.options) { [account] in
                for subscription in subscriptions.current { subscription.cancel() }
                anonymous.close()
                account?.close()
            }
            target.resolve(WeakReference(bridge))
            // Reached now, as over the WebSocket: calls would connect only when made, and a
            // schema whose events all need credentials subscribes to nothing without them, so
            // an unreachable server opened fine (found by review).
            do throws(TransportError) {
                try await anonymous.preconnect()
            } catch {
                await bridge.close()
                throw BridgeError(.notConnected, "cannot connect to \(host):\(port): \(error)")
            }
            for service in schema.services where !service.events.isEmpty {
                do throws(TransportError) {
                    var subscription: GRPCEventSubscription?
                    if service.auth == .none {
                        subscription = try await anonymous.subscribe(toEventsOf: service.fullName, onPush: onPush)
                    } else if let account {
                        subscription = try await account.subscribe(toEventsOf: service.fullName, onPush: onPush)
                    }
                    if let subscription {
                        subscriptions.withLock { $0.append(subscription) }
                        // An event stream that ends (the server restarted, went away, or stopped
                        // answering its PINGs) is the host's to hear, as a WebSocket connection's
                        // end is: nothing else would say the events stopped (found by review).
                        let connection = service.auth == .none ? "unauthenticated" : "authenticated"
                        Task { [weak bridge] in
                            let reason = await subscription.ended
                            bridge?.connectionEnded(connection, reason: "the event stream of \(service.name) ended: \(reason)")
                        }
                    }
                } catch {
                    await bridge.close()
                    throw BridgeError(.notConnected, "cannot listen to the events of \(service.name): \(error)")
                }
            }
        }
        return bridge
    }
}
