import Foundation
@testable import SwitchboardChat
import SwitchboardRuntime
import SwitchboardWebSocket
import PeerSupport
import Testing

/// A client's requests in handlers at once are bounded: past the limit a request is answered
/// 503 at once, and the slots free as handlers answer.
@Suite(.timeLimit(.minutes(2)))
struct RequestsInFlightTests {
    static let endpoint = EndpointDescriptor(rpcName: "test.Slow/Wait", verb: "GET", pathTemplate: "/v1/slow", auth: .none)

    @Test func requestsPastTheLimitAreAnswered503() async throws {
        let release = Locked(false)
        let entered = Locked(0)
        let server = try ChatServer(routes: [RPCRoute(endpoint: Self.endpoint) { _, _ in
            entered.withLock { $0 += 1 }
            for _ in 0..<3000 where !release.current { try? await Task.sleep(for: .milliseconds(10)) }
            return RPCResponse(status: 200)
        }], maximumRequestsInFlight: 2)
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let request = RPCRequest(endpoint: Self.endpoint, path: "/v1/slow", deadline: .now.advanced(by: .seconds(60)))
        let held = (0..<2).map { _ in Task { try? await connection.send(request) } }
        // Both slots taken (the server has them in hand) before the third arrives.
        for _ in 0..<1000 where entered.current < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(entered.current == 2)
        let refused = try await connection.send(request)
        #expect(refused.status == 503)
        #expect(refused.headers["Retry-After"] == "1")
        release.withLock { $0 = true }
        for call in held { #expect(await call.value?.status == 200) }
        // Slots freed: the next request is served.
        #expect(try await connection.send(request).status == 200)
        await connection.close()
    }

    /// The bytes all clients have in handlers are bounded too: two clients, each far below its
    /// own count, share one budget; past it, either is answered 503 until a handler answers.
    @Test func requestBytesAcrossClientsAreBounded() async throws {
        let upload = EndpointDescriptor(rpcName: "test.Slow/Upload", verb: "PUT", pathTemplate: "/v1/upload", auth: .none)
        let release = Locked(false)
        let entered = Locked(0)
        let server = try ChatServer(routes: [RPCRoute(endpoint: upload) { _, _ in
            entered.withLock { $0 += 1 }
            for _ in 0..<3000 where !release.current { try? await Task.sleep(for: .milliseconds(10)) }
            return RPCResponse(status: 200)
        }], maximumRequestBytesInFlight: 14_000)
        defer { server.stop() }
        let first = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let second = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        // About 3 KiB on the wire each, and 1 KiB more counted for the request itself: three
        // fit in 14,000 bytes, a fourth does not.
        let request = RPCRequest(endpoint: upload, path: "/v1/upload", body: Data(repeating: 7, count: 3000), deadline: .now.advanced(by: .seconds(60)))
        let held = [first, second, first].map { connection in Task { try? await connection.send(request) } }
        for _ in 0..<1000 where entered.current < 3 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(entered.current == 3)
        #expect(server.requestBytesInFlight > 12_000 && server.requestBytesInFlight <= 14_000, "\(server.requestBytesInFlight)")
        let refused = try await second.send(request)
        #expect(refused.status == 503)
        #expect(refused.headers["Retry-After"] == "1")
        release.withLock { $0 = true }
        for call in held { #expect(await call.value?.status == 200) }
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 0 })
        #expect(try await second.send(request).status == 200, "the budget was given back")
        #expect(entered.current == 4)
        await first.close()
        await second.close()
    }

    /// A client that leaves with requests in handlers has them cancelled: nobody can be
    /// answered, and what they hold (the server's byte budget) comes back at once, not when
    /// each would have finished (found by review: a client reconnecting with requests to slow
    /// handlers could fill the budget every other client shares with orphans).
    @Test func handlersOfAClientThatLeavesAreCancelled() async throws {
        let entered = Locked(0)
        let cancelled = Locked(0)
        let server = try ChatServer(routes: [RPCRoute(endpoint: Self.endpoint) { _, _ in
            entered.withLock { $0 += 1 }
            for _ in 0..<6000 where !Task.isCancelled { try? await Task.sleep(for: .milliseconds(10)) }
            if Task.isCancelled { cancelled.withLock { $0 += 1 } }
            return RPCResponse(status: 200)
        }])
        defer { server.stop() }
        let connection = try await ChatClient.connectUnauthenticated(to: server.url, options: .init(keepalive: nil))
        let request = RPCRequest(endpoint: Self.endpoint, path: "/v1/slow", deadline: .now.advanced(by: .seconds(120)))
        let held = (0..<3).map { _ in Task { try? await connection.send(request) } }
        for _ in 0..<1000 where entered.current < 3 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(entered.current == 3)
        #expect(server.requestBytesInFlight > 0)
        await connection.close()
        #expect(await eventually(within: .seconds(20)) { cancelled.current == 3 })
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 0 })
        for call in held { _ = await call.value }
    }

    /// A request envelope (Signal's `WebSocketMessage`) for `PUT /v1/flood` with `headers`
    /// header lines of ":", 3 bytes each on the wire.
    static func floodRequest(id: UInt64, headers: Int) -> Data {
        func varint(_ value: UInt64) -> [UInt8] {
            var value = value, bytes: [UInt8] = []
            while value >= 0x80 { bytes.append(UInt8(value & 0x7F) | 0x80); value >>= 7 }
            return bytes + [UInt8(value)]
        }
        func field(_ number: UInt64, _ payload: [UInt8]) -> [UInt8] { varint(number << 3 | 2) + varint(UInt64(payload.count)) + payload }
        var request: [UInt8] = field(1, Array("PUT".utf8))
        request += field(2, Array("/v1/flood".utf8))
        request += varint(4 << 3)
        request += varint(id)
        let line = field(5, [UInt8(ascii: ":")])
        request.reserveCapacity(request.count + line.count * headers)
        for _ in 0..<headers { request += line }
        var envelope = varint(1 << 3)
        envelope += varint(1)
        envelope += field(2, request)
        return Data(envelope)
    }

    /// A request counts what it holds once decoded, not its envelope's size: header lines of
    /// 3 bytes decode to entries of about 100, so requests made of them reach the budget (and
    /// are answered 503) long before their envelopes' bytes would.
    @Test func headerFloodRequestsCountWhatTheyHoldDecoded() async throws {
        let flood = EndpointDescriptor(rpcName: "test.Slow/Flood", verb: "PUT", pathTemplate: "/v1/flood", auth: .none)
        let release = Locked(false)
        let entered = Locked(0)
        let budget = 8 * 1024 * 1024
        let server = try ChatServer(routes: [RPCRoute(endpoint: flood) { _, _ in
            entered.withLock { $0 += 1 }
            for _ in 0..<3000 where !release.current { try? await Task.sleep(for: .milliseconds(10)) }
            return RPCResponse(status: 200)
        }], maximumRequestBytesInFlight: budget)
        defer { server.stop() }
        let socket = try await WebSocketClient.connect(to: server.url)
        defer { socket.abort() }
        // Response statuses by request id, as they arrive.
        let answers = Locked<[UInt64: Int]>([:])
        let reader = Task {
            for await message in socket.messages {
                guard case let .binary(data) = message, let envelope = try? IncomingEnvelope(serializedData: data),
                      let response = envelope.response, let id = response.id, let status = response.status else { continue }
                answers.withLock { $0[id] = Int(status) }
            }
        }
        defer { reader.cancel() }

        // 20,000 header lines: about 60 KB on the wire, about 2 MB decoded. (Ids below 128
        // are one byte, so every request here is the same size.)
        let headers = 20_000
        let envelopeBytes = Self.floodRequest(id: 1, headers: headers).count
        let cost = DecodedRequestSize.bytes(envelopeBytes: envelopeBytes, headerCount: headers)
        let fits = budget / cost
        try #require(fits >= 2 && fits < 20, "\(fits) requests of \(cost) bytes")
        // Counted by envelope bytes (and at least 1 KiB each), one more would still fit.
        #expect((fits + 1) * max(1024, envelopeBytes) <= budget)

        for id in 1...fits { try await socket.send(binary: Self.floodRequest(id: UInt64(id), headers: headers)) }
        #expect(await eventually(within: .seconds(20)) { entered.current == fits }, "\(entered.current) of \(fits) in handlers")
        #expect(server.requestBytesInFlight == fits * cost)

        let refusedID = UInt64(fits + 1)
        try await socket.send(binary: Self.floodRequest(id: refusedID, headers: headers))
        #expect(await eventually(within: .seconds(20)) { answers.current[refusedID] != nil })
        #expect(answers.current[refusedID] == 503)
        #expect(entered.current == fits, "the refused request reached no handler")

        release.withLock { $0 = true }
        #expect(await eventually(within: .seconds(20)) { (1...fits).allSatisfy { answers.current[UInt64($0)] == 200 } })
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 0 })
        // The budget was given back: the same request is served now.
        let laterID = UInt64(fits + 2)
        try await socket.send(binary: Self.floodRequest(id: laterID, headers: headers))
        #expect(await eventually(within: .seconds(20)) { answers.current[laterID] != nil })
        #expect(answers.current[laterID] == 200)
    }
}

/// A request's query parameters count like header lines: the most a path decodes into.
@Suite struct QueryParameterCountTests {
    @Test func countsTheNonEmptyPartsAfterTheFirstQuestionMark() {
        #expect(DecodedRequestSize.queryParameterCount(inPath: "/v1/x") == 0)
        #expect(DecodedRequestSize.queryParameterCount(inPath: "/v1/x?") == 0)
        #expect(DecodedRequestSize.queryParameterCount(inPath: "/v1/x?a=1&b=2") == 2)
        #expect(DecodedRequestSize.queryParameterCount(inPath: "/v1/x?&&a&&") == 1)
        #expect(DecodedRequestSize.queryParameterCount(inPath: "/v1/x?a&b?c") == 2)
        #expect(PathEncoding.parseQuery("a&b?c")?.count == 2, "as the router splits it")
        #expect(PathEncoding.parseQuery("&&a&&")?.count == 1, "as the router splits it")
    }

    @Test func aQueryParameterCountsAsAHeaderLine() {
        let plain = DecodedRequestSize.bytes(envelopeBytes: 100, headerCount: 0)
        #expect(DecodedRequestSize.bytes(envelopeBytes: 100, headerCount: 0, queryParameterCount: 3) == plain + 3 * DecodedRequestSize.perHeader)
        #expect(DecodedRequestSize.bytes(envelopeBytes: 100, headerCount: 3) == plain + 3 * DecodedRequestSize.perHeader)
    }
}
