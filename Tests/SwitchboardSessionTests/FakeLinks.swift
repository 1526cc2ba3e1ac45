import Foundation
import SwitchboardChat
import SwitchboardRuntime
import SwitchboardSession

/// A scripted connection: the test decides when the server speaks and when it goes away.
final class FakeLink: SessionLink, @unchecked Sendable {
    let activity: AsyncStream<Void>
    private let speaker: AsyncStream<Void>.Continuation
    private let ending = Locked<[CheckedContinuation<ChatConnectionError, Never>]>([])
    private let endReason = Locked<ChatConnectionError?>(nil)
    let probes = Locked(0)
    /// Whether each probe is answered at once, as a live server would.
    let answersProbes: Locked<Bool>
    /// When set, `end()` waits for `finishEnding()`, like a close handshake that takes time.
    let slowEnd = Locked(false)
    private let endGate = Locked<[CheckedContinuation<Void, Never>]>([])
    private let endReleased = Locked(false)

    init(answersProbes: Bool = true) {
        (activity, speaker) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.answersProbes = Locked(answersProbes)
    }

    var transport: any RPCTransport<Authenticated> { EchoTransport() }
    var hasEnded: Bool { endReason.current != nil }

    func speak() { speaker.yield() }

    func probe() async {
        probes.withLock { $0 += 1 }
        if answersProbes.current { speak() }
    }

    func waitUntilEnded() async -> ChatConnectionError {
        await withCheckedContinuation { continuation in
            let done: ChatConnectionError? = endReason.withLock { reason in
                if let reason { return reason }
                ending.withLock { $0.append(continuation) }
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// The server goes away with `reason`.
    func drop(_ reason: ChatConnectionError) {
        let first = endReason.withLock { current -> Bool in
            guard current == nil else { return false }
            current = reason
            return true
        }
        guard first else { return }
        speaker.finish()
        for waiter in ending.withLock({ list in defer { list = [] }; return list }) { waiter.resume(returning: reason) }
    }

    func end() async {
        if slowEnd.current {
            await withCheckedContinuation { continuation in
                let go = endReleased.withLock { released -> Bool in
                    if !released { endGate.withLock { $0.append(continuation) } }
                    return released
                }
                if go { continuation.resume() }
            }
        }
        drop(.closed(code: 1000, reason: "closed by the session"))
    }

    /// How often the session ended this link abruptly (without a closing handshake).
    let abruptEnds = Locked(0)

    func endAbruptly(reason: ChatConnectionError) async {
        abruptEnds.withLock { $0 += 1 }
        await end()
    }

    /// Lets a slow `end()` finish.
    func finishEnding() {
        endReleased.withLock { $0 = true }
        for waiter in endGate.withLock({ list in defer { list = [] }; return list }) { waiter.resume() }
    }
}

/// Answers every request with 200, so tests can see requests get through while connected.
struct EchoTransport: RPCTransport {
    typealias Auth = Authenticated
    func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse { RPCResponse(status: 200, message: "OK") }
}

/// Hands out scripted outcomes in order; once the script runs out, live links.
final class FakeConnector: SessionConnector, @unchecked Sendable {
    enum Outcome {
        case link(FakeLink)
        case fail(ChatConnectionError)
        /// Waits until `release` is called, then connects with the link.
        case held(FakeLink)
    }

    private let script: Locked<[Outcome]>
    let attempts = Locked(0)
    let links = Locked<[FakeLink]>([])
    /// The credentials and push handler each connect was given.
    let usedCredentials = Locked<[ChatClient.Credentials]>([])
    let pushHandlers = Locked<[ChatConnection<Authenticated>.PushHandler]>([])
    private let gate = Locked<[CheckedContinuation<Void, Never>]>([])

    init(_ script: [Outcome] = []) { self.script = Locked(script) }

    func release() { for waiter in gate.withLock({ list in defer { list = [] }; return list }) { waiter.resume() } }

    func connect(credentials: ChatClient.Credentials, onPush: @escaping ChatConnection<Authenticated>.PushHandler) async throws(ChatConnectionError) -> any SessionLink {
        attempts.withLock { $0 += 1 }
        usedCredentials.withLock { $0.append(credentials) }
        pushHandlers.withLock { $0.append(onPush) }
        let next = script.withLock { $0.isEmpty ? Outcome.link(FakeLink()) : $0.removeFirst() }
        switch next {
        case let .link(link):
            links.withLock { $0.append(link) }
            return link
        case let .fail(error):
            throw error
        case let .held(link):
            await withCheckedContinuation { continuation in gate.withLock { $0.append(continuation) } }
            links.withLock { $0.append(link) }
            return link
        }
    }
}

/// Waits, in real time but bounded, for `condition`. The bound is generous because the
/// whole suite shares two cores: CPU-heavy tests can hold the task pool for seconds.
func eventually(_ timeout: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return true
}

/// Collects a session's published changes.
final class ChangeLog: @unchecked Sendable {
    let changes = Locked<[SessionChange]>([])
    let ignored = Locked<[IgnoredSessionEvent]>([])

    init<C>(_ session: Session<C>) {
        Task { for await change in session.changes { self.changes.withLock { $0.append(change) } } }
        Task { for await event in session.ignoredEvents { self.ignored.withLock { $0.append(event) } } }
    }

    var states: [SessionState] { changes.current.map(\.to) }
}

let credentials = ChatClient.Credentials(username: "aci", deviceID: 1, password: "pw")
