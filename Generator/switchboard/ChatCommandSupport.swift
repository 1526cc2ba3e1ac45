import Foundation
import SwitchboardCLI
import SwitchboardChat
import SwitchboardDynamic
import SwitchboardGRPC
import SwitchboardRuntime
import SwitchboardSchema
import SwitchboardWebSocket

/// What `call`, `listen` and `mock-server` share: the schema, the connection settings,
/// and line-at-a-time output that scripts can read while the command runs.
enum ChatCommandSupport {
    /// The schema named by `--schema` (default `schema`), or `nil` after printing its errors.
    static func schema(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> Schema? {
        try CommandLineTool.compileSchema(at: arguments.options["--schema"] ?? "schema", importPaths: arguments.importPaths)
    }

    static func url(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> URL {
        guard let text = arguments.options["--url"] else { throw .init("needs --url ws://host:port/path") }
        guard let url = URL(string: text), ["ws", "wss"].contains(url.scheme?.lowercased() ?? "") else {
            throw .init("--url must be a ws:// or wss:// URL, got '\(withoutUserInfo(text))'")
        }
        try checkAuthority(of: text)
        return url
    }

    /// `--url` for gRPC: `http://host:port` (h2c) or `https://host:port` (TLS, ALPN h2).
    static func grpcURL(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> URL {
        guard let text = arguments.options["--url"] else { throw .init("needs --url http://host:port (h2c) or https://host:port") }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
            throw .init("--url must be an http:// or https:// URL for --transport grpc, got '\(withoutUserInfo(text))'")
        }
        try checkAuthority(of: text)
        return url
    }

    /// `--transport websocket|grpc` (default websocket): whether the command goes over gRPC.
    static func overGRPC(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> Bool {
        switch arguments.options["--transport"] ?? "websocket" {
        case "websocket": return false
        case "grpc": return true
        case let other: throw .init("--transport must be websocket or grpc, got '\(other)'")
        }
    }

    /// The gRPC client of `call` and `listen` for `url` (from ``grpcURL(_:)``): TLS for
    /// `https`, each `--header` and the credentials (as `Authorization`) sent as metadata.
    /// The auth kind only picks which generated clients may use it; calls are the same.
    static func grpcTransport(to url: URL, credentials: ChatClient.Credentials?,
                              arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> GRPCClientTransport<Unauthenticated> {
        var options = GRPCClientOptions()
        if url.scheme?.lowercased() == "https" { options.tls = TLSOptions() }
        options.userAgent = "switchboard-cli"
        for header in try headers(arguments) { options.metadata.add(header.name, header.value) }
        if let credentials { options.metadata.add("Authorization", credentials.authorization) }
        let host = url.host ?? "127.0.0.1"
        let port = url.port ?? (options.tls == nil ? 80 : 443)
        return GRPCClientTransport<Unauthenticated>(host: host, port: port, options: options)
    }

    /// Refuses a URL without a host, or whose port is not a number from 1 to 65535.
    static func checkAuthority(of text: String) throws(CommandLineTool.UsageError) {
        if let problem = URLAuthority.problem(in: text) { throw .init("--url: \(problem) in '\(withoutUserInfo(text))'") }
    }

    /// `text` with any `user:password@` before the host left out, for messages.
    static func withoutUserInfo(_ text: String) -> String {
        let afterScheme = text.range(of: "//").map(\.upperBound) ?? text.startIndex
        let authorityEnd = text[afterScheme...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        guard let at = text[afterScheme..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<afterScheme]) + "[REDACTED]@" + String(text[text.index(after: at)...])
    }

    /// The most `--credentials-file` may hold: one line of credentials needs far less.
    static let maximumCredentialsFileBytes = 64 << 10

    /// The environment variable that may hold credentials, kept out of the process list.
    static let credentialsVariable = "SWITCHBOARD_CREDENTIALS"

    /// `user.device:password`, as Signal's Basic auth spells it, from `--credentials`, else
    /// the first line of `--credentials-file`, else `$SWITCHBOARD_CREDENTIALS`. The last
    /// two keep the password out of the shell history and the process list.
    static func credentials(_ arguments: CommandLineTool.Arguments,
                            environment: [String: String] = ProcessInfo.processInfo.environment) throws(CommandLineTool.UsageError) -> ChatClient.Credentials? {
        let source: String
        let text: String
        if arguments.options["--credentials"] != nil, arguments.options["--credentials-file"] != nil {
            throw .init("give --credentials or --credentials-file, not both")
        }
        if let given = arguments.options["--credentials"] {
            (source, text) = ("--credentials", given)
        } else if let path = arguments.options["--credentials-file"] {
            let bytes = try CommandLineTool.readFile(path, atMost: maximumCredentialsFileBytes)
            guard let contents = String(validating: bytes, as: UTF8.self) else { throw .init("--credentials-file \(path) is not UTF-8 text") }
            (source, text) = ("--credentials-file", String(contents.split(whereSeparator: \.isNewline).first ?? ""))
        } else if let variable = environment[credentialsVariable], !variable.isEmpty {
            (source, text) = (credentialsVariable, variable)
        } else {
            return nil
        }
        guard let colon = text.firstIndex(of: ":"), let dot = text[..<colon].lastIndex(of: "."),
              let device = UInt32(text[text.index(after: dot)..<colon]), dot > text.startIndex else {
            throw .init("\(source) must look like user.device:password")
        }
        return ChatClient.Credentials(username: String(text[..<dot]), deviceID: device, password: String(text[text.index(after: colon)...]))
    }

    /// Repeated `--header "Name: value"` options.
    static func headers(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> [HTTPHeaderField] {
        var headers: [HTTPHeaderField] = []
        for text in arguments.repeated["--header"] ?? [] {
            guard let colon = text.firstIndex(of: ":") else { throw .init("--header must look like \"Name: value\"") }
            headers.append(HTTPHeaderField(name: String(text[..<colon]).trimmingCharacters(in: .whitespaces),
                                           value: String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
        }
        return headers
    }

    /// `--timeout <seconds>`, or `fallback`.
    static func timeout(_ arguments: CommandLineTool.Arguments, fallback: Duration) throws(CommandLineTool.UsageError) -> Duration {
        guard let text = arguments.options["--timeout"] else { return fallback }
        guard let seconds = Double(text), seconds > 0, seconds <= 86_400 * 365 else { throw .init("--timeout must be a positive number of seconds, at most a year") }
        return milliseconds(seconds)
    }

    /// `seconds` as a whole number of milliseconds, at least one: a positive value given must
    /// not become zero (which the limits read as "at once", or "never").
    static func milliseconds(_ seconds: Double) -> Duration {
        .milliseconds(max(1, Int64((seconds * 1000).rounded(.up))))
    }

    static func options(_ arguments: CommandLineTool.Arguments) throws(CommandLineTool.UsageError) -> ChatConnectionOptions {
        ChatConnectionOptions(headers: try headers(arguments) + [HTTPHeaderField(name: "User-Agent", value: "switchboard-cli")])
    }

    /// Writes a line to standard output at once, so a script reading it sees each event.
    static func printLine(_ text: String) {
        CommandLineTool.writeIgnoringClosedOutput(TerminalText.sanitized(text) + "\n", to: .standardOutput)
    }

    /// `operation`, or `nil` if `timeout` passes first. Returns at the deadline even if the
    /// operation ignores cancellation (the command exits right after).
    static func withTimeout<T: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async -> T) async -> T? {
        let first = FirstAnswer<T?>()
        let work = Task { _ = first.offer(await operation()) }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            _ = first.offer(nil)
        }
        let result = await first.value
        work.cancel()
        timer.cancel()
        return result
    }
}
