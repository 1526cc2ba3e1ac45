import Foundation
import SwitchboardCLI
import SwitchboardChat
import SwitchboardDynamic
import SwitchboardGRPC
import SwitchboardRuntime
import SwitchboardSchema

/// `switchboard listen`: prints each pushed event as one JSON line and acknowledges it.
/// `--transport grpc` listens over gRPC instead: a `SwitchboardEvents` subscription per
/// service with events, each push acknowledged through `SwitchboardAcknowledge`.
enum ListenCommand {
    static func run(_ arguments: CommandLineTool.Arguments) async throws(CommandLineTool.UsageError) -> Int32 {
        try arguments.rejectUnknown(allowed: ["--url", "--schema", "--credentials", "--credentials-file", "--header", "--count", "--timeout", "--transport"])
        guard arguments.positional.isEmpty else { throw .init("listen takes no positional arguments") }
        let overGRPC = try ChatCommandSupport.overGRPC(arguments)
        let url = overGRPC ? try ChatCommandSupport.grpcURL(arguments) : try ChatCommandSupport.url(arguments)
        let credentials = try ChatCommandSupport.credentials(arguments)
        let options = try ChatCommandSupport.options(arguments)
        var limit: Int?
        if let text = arguments.options["--count"] {
            guard let count = Int(text), count > 0 else { throw .init("--count must be a positive number") }
            limit = count
        }
        let timeout = try ChatCommandSupport.timeout(arguments, fallback: .seconds(Int64(Int32.max)))
        guard let schema = try ChatCommandSupport.schema(arguments) else { return 1 }
        let printer = EventPrinter(schema: schema, limit: limit)
        if credentials == nil {
            // Not an error (a server may push to anyone), but Signal's pushes only to accounts.
            CommandLineTool.printError("switchboard: note: listening without credentials; servers push to authenticated connections only (pass --credentials, --credentials-file or $SWITCHBOARD_CREDENTIALS)")
        }
        if overGRPC {
            let transport = try ChatCommandSupport.grpcTransport(to: url, credentials: credentials, arguments: arguments)
            return await listenOverGRPC(transport, schema: schema, printer: printer, withCredentials: credentials != nil, limit: limit, timeout: timeout)
        }

        let connected = Locked(false)
        let finished = await ChatCommandSupport.withTimeout(timeout) { () async -> Int32 in
            let onPush: @Sendable (ServerRequest) async -> EventOutcome = { await printer.handle($0) }
            do throws(ChatConnectionError) {
                if let credentials {
                    let connection = try await ChatClient.connectAuthenticated(to: url, credentials: credentials, options: options, onPush: onPush)
                    connected.withLock { $0 = true }
                    return await printer.waitForEnd(of: connection)
                }
                let connection = try await ChatClient.connectUnauthenticated(to: url, options: options, onPush: onPush)
                connected.withLock { $0 = true }
                return await printer.waitForEnd(of: connection)
            } catch {
                CommandLineTool.printError("switchboard: cannot connect: \(TerminalText.inline(String(describing: error)))")
                return 1
            }
        }
        return outcome(finished, connected: connected.current, printer: printer, limit: limit, timeout: timeout)
    }

    /// How a listen ends: as its stream said, or at the timeout, where a quiet, healthy listen
    /// ends 0 and one that never got connected has listened to nothing.
    static func outcome(_ finished: Int32?, connected: Bool, printer: EventPrinter, limit: Int?, timeout: Duration) -> Int32 {
        guard let finished else {
            guard connected else {
                CommandLineTool.printError("switchboard: not connected within the \(timeout) timeout")
                return 1
            }
            CommandLineTool.printError("switchboard: \(printer.printed) events before the \(timeout) timeout")
            return limit == nil ? 0 : 1
        }
        return finished
    }

    /// How long, once `--count` events are printed over gRPC, the last one's acknowledgement
    /// may take to go out before the subscriptions are cancelled. A subscription acknowledges
    /// each push after its handler returns and says nothing when it has, and cancelling it
    /// drops an acknowledgement not yet sent (the WebSocket's close waits for it instead).
    static let grpcAcknowledgementGrace: Duration = .milliseconds(500)

    /// `listen --transport grpc`: subscribes to the events of every service that has some
    /// (with credentials; without, only those of `auth none` services, as the bridge does:
    /// a server may refuse an account's stream without them) and prints each push as the
    /// WebSocket listen does; the subscriptions acknowledge them.
    static func listenOverGRPC(_ transport: GRPCClientTransport<Unauthenticated>, schema: Schema, printer: EventPrinter,
                               withCredentials: Bool, limit: Int?, timeout: Duration) async -> Int32 {
        let services = schema.services.filter { !$0.events.isEmpty && (withCredentials || $0.auth == ServiceAuth.none) }.map(\.fullName)
        guard schema.services.contains(where: { !$0.events.isEmpty }) else {
            CommandLineTool.printError("switchboard: the schema declares no events to listen to")
            transport.close()
            return 1
        }
        let subscriptions = Locked<[GRPCEventSubscription]>([])
        let connected = Locked(false)
        let finished = await ChatCommandSupport.withTimeout(timeout) { () async -> Int32 in
            let onPush: @Sendable (ServerRequest) async -> EventOutcome = { await printer.handle($0) }
            for service in services {
                do throws(TransportError) {
                    let subscription = try await transport.subscribe(toEventsOf: service, onPush: onPush)
                    subscriptions.withLock { $0.append(subscription) }
                } catch {
                    CommandLineTool.printError("switchboard: cannot listen to the events of \(service): \(TerminalText.inline(String(describing: error)))")
                    return 1
                }
            }
            connected.withLock { $0 = true }
            return await printer.waitForEnd(of: subscriptions.current, grace: ListenCommand.grpcAcknowledgementGrace)
        }
        // However it ended, no stream stays open: pushes after this are the server's to keep.
        for subscription in subscriptions.current { subscription.cancel() }
        transport.close()
        return outcome(finished, connected: connected.current, printer: printer, limit: limit, timeout: timeout)
    }
}

/// Decodes pushes by the schema's events and prints them; stops the connection once
/// `limit` events are printed.
final class EventPrinter: @unchecked Sendable {
    private let schema: Schema
    private let events: [(service: ServiceDefinition, event: EventDefinition)]
    private let limit: Int?
    private let count = Locked(0)
    private let done = Locked(false)
    /// Yields once when `limit` events are printed; finishes when the connection ends.
    private let limitReached: AsyncStream<Void>
    private let limitSignal: AsyncStream<Void>.Continuation

    init(schema: Schema, limit: Int?) {
        self.schema = schema
        self.limit = limit
        (limitReached, limitSignal) = AsyncStream.makeStream(of: Void.self)
        events = schema.services.flatMap { service in service.events.map { (service, $0) } }
    }

    var printed: Int { count.withLock { $0 } }

    func handle(_ request: ServerRequest) async -> EventOutcome {
        guard let match = events.first(where: { $0.event.verb == request.verb && $0.event.path == request.path }) else {
            CommandLineTool.printError("switchboard: unknown push \(TerminalText.inline(request.verb)) \(TerminalText.inline(request.path)), answered 404")
            return .unknown
        }
        var line = "{\"event\":\"\(match.service.name).\(match.event.name)\""
        if let type = match.event.payload {
            let body = request.body ?? Data()
            do throws(DynamicCodecError) {
                let payload: DynamicMessage
                if match.service.encoding == .json {
                    // Leniently, as a generated event handler reads it: a server on a newer
                    // schema may add members or enum names.
                    payload = try DynamicJSONCodec.lenient(schema: schema).decode(body.isEmpty ? Data("{}".utf8) : body, as: type)
                } else {
                    payload = try DynamicBinaryCodec(schema: schema).decode(body, as: type)
                }
                line += ",\"payload\":" + DynamicJSONCodec(schema: schema).encode(payload, prettyPrinted: false)
            } catch {
                // Answered 400: the server keeps it (only 2xx deletes) for a client that can read it.
                CommandLineTool.printError("switchboard: \(match.service.name).\(match.event.name) payload does not decode: \(TerminalText.inline(error.message))")
                return .reject(EventOutcome.badRequest, reason: error.message)
            }
        }
        // A slot is taken and the line printed in one step: two subscriptions' pushes at one
        // moment both passed a check made apart from the count, and N+1 lines came out.
        let total: Int? = count.withLock { value -> Int? in
            guard !done.withLock({ $0 }), limit.map({ value < $0 }) ?? true else { return nil }
            value += 1
            ChatCommandSupport.printLine(line + "}")
            return value
        }
        guard let total else { return .withhold(reason: "enough events printed") }
        if let limit, total >= limit {
            done.withLock { $0 = true }
            limitSignal.yield()
            limitSignal.finish()
        }
        return .ok
    }

    /// Waits until `limit` events were printed (then closes) or the server ends the connection.
    func waitForEnd<Auth: AuthMode>(of connection: ChatConnection<Auth>) async -> Int32 {
        if limit != nil {
            let watcher = Task { [limitSignal] in
                _ = await connection.waitUntilClosed()
                limitSignal.finish()
            }
            var reached = false
            for await _ in limitReached {
                reached = true
                break
            }
            watcher.cancel()
            if reached {
                // Closing waits for the last handler's acknowledgement to be sent.
                await connection.close()
                return 0
            }
        }
        let info = await connection.waitUntilClosed()
        CommandLineTool.printError("switchboard: connection closed: \(TerminalText.inline(connection.disconnectReason.map(String.init(describing:)) ?? "\(info.code)"))")
        return limit == nil && info.code == .normalClosure ? 0 : 1
    }

    /// The same over gRPC: waits until `limit` events were printed (then, `grace` later, for
    /// their acknowledgements to go out, returns 0; the caller cancels the subscriptions) or
    /// every subscription ended (0 when the server ended each with OK and there is no
    /// `limit`). With none to wait for (no credentials, and every service
    /// with events needs an account), it waits until cancelled, as a quiet connection would.
    func waitForEnd(of subscriptions: [GRPCEventSubscription], grace: Duration) async -> Int32 {
        if subscriptions.isEmpty {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            return limit == nil ? 0 : 1
        }
        // Each subscription's end, in the order they end; the stream finishes when all have.
        let (endings, ending) = AsyncStream.makeStream(of: String.self)
        let remaining = Locked(subscriptions.count)
        for subscription in subscriptions {
            Task { [limitSignal] in
                let reason = await subscription.ended
                ending.yield("\(subscription.service): \(reason)")
                let left = remaining.withLock { value -> Int in
                    value -= 1
                    return value
                }
                if left == 0 {
                    ending.finish()
                    limitSignal.finish()
                }
            }
        }
        if limit != nil {
            var reached = false
            for await _ in limitReached {
                reached = true
                break
            }
            if reached {
                try? await Task.sleep(for: grace)
                return 0
            }
        }
        var normal = true
        for await reason in endings {
            CommandLineTool.printError("switchboard: subscription ended: \(TerminalText.inline(reason))")
            if !reason.hasSuffix(": \(EventPrinter.serverEndedSubscription)") { normal = false }
        }
        return limit == nil && normal ? 0 : 1
    }

    /// Why a subscription ended when the server ended it with OK (``GRPCEventSubscription/ended``).
    static let serverEndedSubscription = GRPCEventSubscription.endedByServer
}
