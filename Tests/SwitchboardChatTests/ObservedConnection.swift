import Foundation
import SignalChat
import SwitchboardChat
import SwitchboardRuntime

/// An authenticated chat connection to `server` whose diagnostics and push-interceptor log
/// records are kept, for tests of how pushes are answered and reported.
struct ObservedConnection {
    let connection: ChatConnection<Authenticated>
    let diagnostics: Locked<[ChatDiagnostic]>
    let records: Locked<[LoggingInterceptor.Record]>

    static func open(to server: ChatServer, logging detail: LoggingInterceptor.Detail,
                     onPush: @escaping @Sendable (ServerRequest) async -> EventOutcome) async throws -> ObservedConnection {
        let diagnostics = Locked<[ChatDiagnostic]>([])
        let records = Locked<[LoggingInterceptor.Record]>([])
        let logging = LoggingInterceptor(detail: detail, events: Messages.descriptor.events) { record in records.withLock { $0.append(record) } }
        let connection = try await ChatClient.connectAuthenticated(
            to: server.url, credentials: .init(username: "aci-1", deviceID: 1, password: "pw"),
            options: .init(keepalive: nil, diagnostics: { diagnostic in diagnostics.withLock { $0.append(diagnostic) } },
                           pushInterceptors: [logging]),
            onPush: onPush)
        return ObservedConnection(connection: connection, diagnostics: diagnostics, records: records)
    }
}
