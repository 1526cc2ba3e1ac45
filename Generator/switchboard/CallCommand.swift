import Foundation
import SwitchboardCLI
import SwitchboardChat
import SwitchboardDynamic
import SwitchboardGRPC
import SwitchboardRuntime

/// `switchboard call`: one request, typed by the schema read at run time, like grpcurl.
enum CallCommand {
    /// The most a request's JSON may hold when read from standard input: 64 MiB.
    static let maximumRequestBytes = 64 << 20

    static func run(_ arguments: CommandLineTool.Arguments) async throws(CommandLineTool.UsageError) -> Int32 {
        try arguments.rejectUnknown(allowed: ["--url", "--schema", "--credentials", "--credentials-file", "--key", "--header", "--timeout", "--transport"], flags: ["--verbose"])
        let overGRPC = try ChatCommandSupport.overGRPC(arguments)
        guard (1...2).contains(arguments.positional.count) else {
            throw .init("call needs <Service.endpoint> and optionally a JSON request (or - for standard input)")
        }
        let url = overGRPC ? try ChatCommandSupport.grpcURL(arguments) : try ChatCommandSupport.url(arguments)
        let credentials = try ChatCommandSupport.credentials(arguments)
        let options = try ChatCommandSupport.options(arguments)
        guard let schema = try ChatCommandSupport.schema(arguments) else { return 1 }
        let endpoint: DynamicEndpoint
        do throws(DynamicCodecError) {
            endpoint = try DynamicEndpoint(schema: schema, name: arguments.positional[0])
        } catch {
            throw .init(error.message)
        }
        var keys: [String: String] = [:]
        for pair in arguments.repeated["--key"] ?? [] {
            guard let equals = pair.firstIndex(of: "=") else { throw .init("--key must look like name=value") }
            keys[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        let json: Data
        switch arguments.positional.count > 1 ? arguments.positional[1] : "" {
        case "-": json = try CommandLineTool.read("standard input", from: .standardInput, atMost: maximumRequestBytes)
        case let text: json = Data(text.utf8)
        }
        var request: RPCRequest
        do throws(DynamicCodecError) {
            request = try endpoint.request(fromJSON: json, keys: keys)
        } catch {
            throw .init("bad request: \(error.message)")
        }
        let timeout = try ChatCommandSupport.timeout(arguments, fallback: endpoint.descriptor.defaultTimeout ?? .seconds(10))
        request.deadline = .now + timeout

        if arguments.flags.contains("--verbose") { printHead(of: request) }
        let result: Result<RPCResponse, ChatCommandFailure>
        if overGRPC {
            if endpoint.requiresAccount, credentials == nil {
                throw .init("\(arguments.positional[0]) needs an account: pass --credentials user.device:password")
            }
            let transport = try ChatCommandSupport.grpcTransport(to: url, credentials: credentials, arguments: arguments)
            do throws(TransportError) {
                result = .success(try await transport.send(request))
            } catch {
                result = .failure(.transport(error))
            }
            transport.close()
        } else if endpoint.requiresAccount {
            guard let credentials else {
                throw .init("\(arguments.positional[0]) needs an authenticated connection: pass --credentials user.device:password")
            }
            result = await send(request, timeout: timeout) { () async throws(ChatConnectionError) in
                try await ChatClient.connectAuthenticated(to: url, credentials: credentials, options: options)
            }
        } else {
            result = await send(request, timeout: timeout) { () async throws(ChatConnectionError) in
                try await ChatClient.connectUnauthenticated(to: url, options: options)
            }
        }
        switch result {
        case let .failure(failure):
            CommandLineTool.printError("switchboard: \(TerminalText.inline("\(failure)"))")
            return 1
        case let .success(response):
            if arguments.flags.contains("--verbose") { printHead(of: response) }
            return report(response, endpoint: endpoint)
        }
    }

    /// `> VERB path` and headers, as logs see them: the log-safe path, secret values redacted.
    static func printHead(of request: RPCRequest) {
        var lines = ["> \(request.verb) \(request.logSafePath)"]
        lines += request.headers.map { "> " + LogRedaction.header($0.name, $0.value) }
        lines.append("> (\(LogRedaction.body(request.body?.count ?? 0)))")
        CommandLineTool.printError(lines.joined(separator: "\n"))
    }

    /// `< status message` and headers, secret values redacted.
    static func printHead(of response: RPCResponse) {
        var lines = ["< \(response.status)\(response.message.map { " " + TerminalText.inline($0) } ?? "")"]
        lines += response.headers.map { "< " + TerminalText.inline(LogRedaction.header($0.name, $0.value)) }
        lines.append("< (\(LogRedaction.body(response.body.count)))")
        CommandLineTool.printError(lines.joined(separator: "\n"))
    }

    /// Prints the typed outcome; 0 only for success.
    static func report(_ response: RPCResponse, endpoint: DynamicEndpoint) -> Int32 {
        let codec = DynamicJSONCodec(schema: endpoint.schema)
        let outcome: DynamicEndpoint.Outcome
        do throws(DynamicCodecError) {
            outcome = try endpoint.outcome(of: response)
        } catch {
            CommandLineTool.printError("switchboard: status \(response.status), but the body does not decode: \(TerminalText.inline(error.message))")
            return 1
        }
        switch outcome {
        case let .success(message):
            ChatCommandSupport.printLine(message.map { codec.encode($0) } ?? "{}")
            return 0
        case let .declaredError(name, status, body, retryAfter):
            var text = "switchboard: \(endpoint.service.name).\(endpoint.endpoint.name) failed: \(name) (status \(status))"
            if let retryAfter { text += ", retry after \(RPCResponse.retryAfterValue(retryAfter)) s" }
            if let body { text += "\n" + codec.encode(body) }
            CommandLineTool.printError(text)
            return 1
        case let .undeclaredStatus(status, body):
            var text = "switchboard: \(endpoint.service.name).\(endpoint.endpoint.name) failed with undeclared status \(status)"
            if !body.isEmpty { text += " (\(body.count) body bytes)" }
            CommandLineTool.printError(text)
            return 1
        }
    }

    private static func send<Auth: AuthMode>(
        _ request: RPCRequest, timeout: Duration,
        connect: @escaping @Sendable () async throws(ChatConnectionError) -> ChatConnection<Auth>
    ) async -> Result<RPCResponse, ChatCommandFailure> {
        let outcome = await ChatCommandSupport.withTimeout(timeout) { () async -> Result<RPCResponse, ChatCommandFailure> in
            let connection: ChatConnection<Auth>
            do throws(ChatConnectionError) {
                connection = try await connect()
            } catch {
                return .failure(.connect(error))
            }
            let result: Result<RPCResponse, ChatCommandFailure>
            do throws(TransportError) {
                result = .success(try await connection.send(request))
            } catch {
                result = .failure(.transport(error))
            }
            await connection.close()
            return result
        }
        return outcome ?? .failure(.timedOut(timeout))
    }
}

/// Why a command could not get an answer at all.
enum ChatCommandFailure: Error, CustomStringConvertible {
    case connect(ChatConnectionError)
    case transport(TransportError)
    case timedOut(Duration)

    var description: String {
        switch self {
        case let .connect(error): return "cannot connect: \(error)"
        case let .transport(error): return "transport error: \(error)"
        case let .timedOut(limit): return "no answer within \(limit)"
        }
    }
}
