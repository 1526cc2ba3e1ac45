import Foundation
@testable import SwitchboardGRPC
import SwitchboardHTTP2
import SwitchboardRuntime
import Testing

/// Header lists every generated call shares get their metadata from a table made once: it
/// must be exactly what the per-call path makes of them, and only those lists may use it.
@Suite struct GRPCSharedHeaderListsTests {
    static let sharedLists = [BodyEncoding.protobuf, .json].flatMap {
        [$0.requestHeaders(withBody: true), $0.requestHeaders(withBody: false), $0.contentTypeHeaders]
    }

    @Test func eachSharedListGivesWhatThePerCallPathGives() throws {
        for headers in Self.sharedLists {
            try GRPCMetadata.checkSendable(headers)
            #expect(GRPCSharedHeaderLists.requestMetadata(of: headers) == GRPCMetadata.requestMetadata(headers), "\(headers)")
            #expect(GRPCSharedHeaderLists.responseMetadata(of: headers) == GRPCMetadata.responseMetadata(headers), "\(headers)")
        }
    }

    /// A list is served by its own entry: lists of one length with metadata of their own
    /// (names no transport drops) each find theirs, and a list that is not in the table none.
    @Test func eachListFindsItsOwnEntry() {
        let lists = ["X-A", "X-B", "X-C"].map { RPCHeaders([(name: $0, value: "1")]) }
        let entries = GRPCSharedHeaderLists.entries(for: lists)
        for (index, list) in lists.enumerated() {
            let found = GRPCSharedHeaderLists.entry(for: list, in: entries)
            #expect(found?.requestMetadata?.map(\.name) == [lists[index].fields[0].name.lowercased()])
            #expect(found?.responseMetadata.map(\.name) == [lists[index].fields[0].name.lowercased()])
        }
        #expect(GRPCSharedHeaderLists.entry(for: RPCHeaders([(name: "X-A", value: "1")]), in: entries) == nil)
        // A list that cannot be metadata is marked so, not dropped from the table.
        let unsendable = RPCHeaders([(name: "X A", value: "1")])
        #expect(GRPCSharedHeaderLists.entries(for: [unsendable]).first?.requestMetadata == nil)
    }

    @Test func otherListsTakeThePerCallPath() {
        for headers in Self.sharedLists {
            // Equal content built apart, and a copy with a header added, are not the shared list.
            #expect(GRPCSharedHeaderLists.requestMetadata(of: RPCHeaders(headers.fields.map { (name: $0.name, value: $0.value) })) == nil)
            var traced = headers
            traced.add("X-Trace", "abc")
            #expect(GRPCSharedHeaderLists.requestMetadata(of: traced) == nil)
            #expect(GRPCSharedHeaderLists.responseMetadata(of: traced) == nil)
            // …and their added header is metadata on that path.
            #expect(GRPCMetadata.requestMetadata(traced).contains { $0.name == "x-trace" && $0.value == "abc" })
        }
        #expect(GRPCSharedHeaderLists.requestMetadata(of: RPCHeaders()) == nil)
    }

    /// Through a real request head: a shared list adds nothing, an added header is sent.
    @Test func aRequestHeadCarriesAddedMetadataOnly() {
        let head = GRPCRequestHead(host: "127.0.0.1", port: 1, options: GRPCClientOptions())
        let shared = BodyEncoding.protobuf.requestHeaders(withBody: true)
        let plain = head.headers(path: "/a.B/C", deadline: nil, metadata: shared)
        var traced = shared
        traced.add("X-Trace", "abc")
        let withTrace = head.headers(path: "/a.B/C", deadline: nil, metadata: traced)
        #expect(withTrace.dropLast() == plain[...])
        #expect(withTrace.last.map { $0.name == "x-trace" && $0.value == "abc" } == true)
        #expect(!plain.contains { $0.name == "accept" || $0.name == "content-type" && $0.value != "application/grpc" })
    }

    /// Calls with the same deadline send the same header block, so the server's HPACK
    /// decoder reads each from its memory whole: the time left, measured afresh per call,
    /// is rounded before it is written.
    @Test func callsWithTheSameDeadlineSendTheSameHeaderBlock() throws {
        let head = GRPCRequestHead(host: "127.0.0.1", port: 1, options: GRPCClientOptions())
        let metadata = BodyEncoding.protobuf.requestHeaders(withBody: true)
        var encoder = HPACKEncoder()
        var blocks: [[UInt8]] = []
        // One deadline, its time left measured at each call a millisecond apart.
        let deadline = ContinuousClock.now + .seconds(60)
        for _ in 0..<3 {
            let headers = head.headers(path: "/a.B/C", deadline: deadline, metadata: metadata)
            #expect(headers.first { $0.name == "grpc-timeout" }?.value == "1M")
            var block: [UInt8] = []
            encoder.encode(headers, into: &block)
            blocks.append(block)
            Thread.sleep(forTimeInterval: 0.001)
        }
        #expect(blocks[1] == blocks[2])
        var decoder = HPACKDecoder()
        let first = try decoder.decode(blocks[0])
        #expect(try decoder.decode(blocks[1]).headers == first.headers)
    }
}
