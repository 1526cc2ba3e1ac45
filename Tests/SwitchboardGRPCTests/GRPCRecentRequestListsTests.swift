import Foundation
@testable import SwitchboardGRPC
import SwitchboardHTTP2
import SwitchboardRuntime
import Testing

/// Calls of one kind send the very same request header array; anything that makes a list
/// differ (method, timeout text, metadata, encoding) gives another list.
@Suite struct GRPCRecentRequestListsTests {
    static let head = GRPCRequestHead(host: "127.0.0.1", port: 1, options: GRPCClientOptions())
    static let shared = BodyEncoding.protobuf.requestHeaders(withBody: true)

    static func list(_ path: String = "/a.B/C", deadline: ContinuousClock.Instant? = nil, metadata: RPCHeaders = shared, json: Bool = false,
                     head: GRPCRequestHead = head) -> [HPACKHeader] {
        head.headers(path: path, deadline: deadline, metadata: metadata, json: json)
    }

    static func sameArray(_ lhs: [HPACKHeader], _ rhs: [HPACKHeader]) -> Bool {
        lhs.withUnsafeBufferPointer { $0.baseAddress } == rhs.withUnsafeBufferPointer { $0.baseAddress }
    }

    @Test func callsOfOneKindSendTheSameArray() {
        let head = GRPCRequestHead(host: "127.0.0.1", port: 1, options: GRPCClientOptions())
        // Far off: its text ("1000S") stays the same for a second of this test's time.
        let deadline = ContinuousClock.now + .seconds(1000)
        let first = Self.list(deadline: deadline, head: head)
        let second = Self.list(deadline: deadline, head: head)
        #expect(first == second)
        #expect(Self.sameArray(first, second))
    }

    @Test func whatMakesAListDifferGivesAnotherList() {
        let head = GRPCRequestHead(host: "127.0.0.1", port: 1, options: GRPCClientOptions())
        let base = Self.list(head: head)
        var traced = Self.shared
        traced.add("X-Trace", "1")
        let others = [
            Self.list("/a.B/D", head: head),
            Self.list(deadline: .now + .seconds(1000), head: head),
            Self.list(json: true, head: head),
            Self.list(metadata: traced, head: head),
        ]
        for other in others {
            #expect(other != base)
            #expect(!Self.sameArray(other, base))
        }
        #expect(others[1].contains { $0.name == "grpc-timeout" && $0.value == "1000S" })
        #expect(others[3].contains { $0.name == "x-trace" && $0.value == "1" })
    }

    /// A call's own metadata is never kept: each call builds its list.
    @Test func aCallsOwnMetadataIsNotKept() {
        let head = GRPCRequestHead(host: "127.0.0.1", port: 1, options: GRPCClientOptions())
        var own = RPCHeaders()
        own.add("X-Request-Id", "7")
        let first = Self.list(metadata: own, head: head)
        let second = Self.list(metadata: own, head: head)
        #expect(first == second)
        #expect(!Self.sameArray(first, second))
    }

    @Test func theOldestListMakesRoom() {
        let head = GRPCRequestHead(host: "127.0.0.1", port: 1, options: GRPCClientOptions())
        let paths = (0...GRPCRecentRequestLists.capacity).map { "/a.B/M\($0)" }
        let lists = paths.map { Self.list($0, head: head) }
        // The newest `capacity` come back as kept; the first was replaced by the last.
        for (path, list) in zip(paths, lists).dropFirst() { #expect(Self.sameArray(Self.list(path, head: head), list)) }
        #expect(!Self.sameArray(Self.list(paths[0], head: head), lists[0]))
    }

    /// The shared metadata is part of the key by its storage: two lists of the same count
    /// kept apart are told apart. And callers that all missed together keep one list.
    @Test func sharedMetadataIsKeyedByStorageAndConcurrentMissesKeepOne() {
        let lists = GRPCRecentRequestLists()
        let first = [HPACKHeader("x-a", "1")], second = [HPACKHeader("x-a", "1")]
        let sentFirst = lists.keep([HPACKHeader("x-list", "first")], path: "/a.B/C", timeout: nil, metadata: first, json: false)
        #expect(lists.list(path: "/a.B/C", timeout: nil, metadata: first, json: false) == sentFirst)
        #expect(lists.list(path: "/a.B/C", timeout: nil, metadata: second, json: false) == nil)
        // A second caller's list for the same parts: the kept one is sent instead.
        let again = lists.keep([HPACKHeader("x-list", "again")], path: "/a.B/C", timeout: nil, metadata: first, json: false)
        #expect(again == sentFirst)
        #expect(lists.list(path: "/a.B/C", timeout: "1S", metadata: first, json: false) == nil)
        #expect(lists.list(path: "/a.B/C", timeout: nil, metadata: first, json: true) == nil)
    }
}
