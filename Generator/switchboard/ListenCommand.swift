import Foundation
import SwitchboardCLI
import SwitchboardChat
import SwitchboardDynamic
import SwitchboardRuntime
import SwitchboardSchema

/// `switchboard listen`: prints each pushed event as one JSON line and acknowledges it.
enum ListenCommand {
    static func run(_ arguments: CommandLineTool.Arguments) async throws(CommandLineTool.UsageError) -> Int32 {
        try arguments.rejectUnknown(allowed: ["--url", "--schema", "--credentials", "--credentials-file", "--header", "--count", "--timeout"])
        guard arguments.positional.isEmpty else { throw .init("listen takes no positional arguments") }
        let url = try ChatCommandSupport.url(arguments)
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
        guard let finished else {
            // A quiet, healthy listen ends 0; one that never got connected has listened to nothing.
            guard connected.withLock({ $0 }) else {
                CommandLineTool.printError("switchboard: not connected within the \(timeout) timeout")
                return 1
            }
            CommandLineTool.printError("switchboard: \(printer.printed) events before the \(timeout) timeout")
            return limit == nil ? 0 : 1
        }
        return finished
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
        guard !done.withLock({ $0 }) else { return .withhold(reason: "enough events printed") }
        ChatCommandSupport.printLine(line + "}")
        let total = count.withLock { value -> Int in
            value += 1
            return value
        }
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
}
