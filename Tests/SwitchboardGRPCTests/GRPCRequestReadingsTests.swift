import Foundation
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardRuntime
import Testing

/// A server connection reads a request header list once and serves calls that send the
/// same array again from memory; a list is known by its storage only, never its contents.
@Suite struct GRPCRequestReadingsTests {
    static let router = RPCRouter(routes: SampleHandlers().allRoutes)
    static let lookUpPath = "/" + Usernames.lookUpUsernameHash.rpcName

    static func request(path: String = lookUpPath, extra: [HPACKHeader] = []) -> [HPACKHeader] {
        [HPACKHeader(":method", "POST"), HPACKHeader(":scheme", "http"), HPACKHeader(":path", path),
         HPACKHeader(":authority", "localhost"), HPACKHeader("content-type", "application/grpc"), HPACKHeader("te", "trailers"),
         HPACKHeader("grpc-timeout", "1M"), HPACKHeader("authorization", "Basic YTpi")] + extra
    }

    @Test func aListIsReadForItsMethodTimeoutAndMetadata() throws {
        let headers = Self.request(extra: [HPACKHeader("grpc-encoding", "gzip")])
        let reading = GRPCRequestReading(headers: headers, methods: GRPCMethodCache(router: Self.router))
        // What the call charges for its headers: the whole list, as HPACK counts it.
        #expect(reading.headerListSize == HPACKHeader.listSize(headers))
        #expect(reading.method?.endpoint == Usernames.lookUpUsernameHash)
        #expect(reading.timeout == .seconds(60))
        #expect(reading.metadata.fields.map { [$0.name, $0.value] } == [["authorization", "Basic YTpi"]])
        #expect(reading.unsupportedEncoding == "gzip")
        #expect(!reading.isJSON && reading.nonGRPCStatus == nil && reading.headerProblem == nil)
        let notGRPC = GRPCRequestReading(headers: [HPACKHeader(":method", "GET"), HPACKHeader(":path", Self.lookUpPath)],
                                         methods: GRPCMethodCache(router: Self.router))
        #expect(notGRPC.method == nil && notGRPC.nonGRPCStatus == 405)
        let badTimeout = GRPCRequestReading(headers: [HPACKHeader("grpc-timeout", "12x")], methods: GRPCMethodCache(router: Self.router))
        #expect(badTimeout.headerProblem?.status == .internal)
    }

    @Test func theSameArrayIsReadOnceAndAnEqualOneBuiltApartIsReadAgain() {
        let readings = GRPCRequestReadings()
        let methods = GRPCMethodCache(router: Self.router)
        let list = Self.request()
        let first = readings.reading(of: list, methods: methods)
        let copy = list
        #expect(readings.reading(of: copy, methods: methods) === first)
        #expect(readings.reused == 1)
        // Equal contents in storage of its own: read, not taken from memory.
        let apart = Self.request()
        #expect(readings.reading(of: apart, methods: methods) !== first)
        #expect(readings.reused == 1)
        // A changed copy has storage of its own too.
        var changed = list
        changed[6].value = "5S"
        let reading = readings.reading(of: changed, methods: methods)
        #expect(reading.timeout == .seconds(5))
        #expect(readings.reused == 1)
    }

    /// Only lists the HPACK decoder could hand back again are kept: a longer or larger one
    /// would only pin its strings for the connection's life.
    @Test func listsTheDecoderCannotRepeatAreNotKept() {
        let readings = GRPCRequestReadings()
        let methods = GRPCMethodCache(router: Self.router)
        let long = Self.request(extra: (0..<GRPCRequestReadings.fieldLimit).map { HPACKHeader("x-n\($0)", "v") })
        let large = Self.request(extra: [HPACKHeader("x-large", String(repeating: "a", count: GRPCRequestReadings.sizeLimit))])
        for list in [long, large] {
            _ = readings.reading(of: list, methods: methods)
            _ = readings.reading(of: list, methods: methods)
        }
        #expect(readings.reused == 0)
    }

    /// Every empty array shares one storage; not kept, so no reading stands for another list
    /// by that accident (two empty lists would read alike, but the rule stays simple).
    @Test func emptyListsAreNeverTakenForOneAnother() {
        let readings = GRPCRequestReadings()
        let methods = GRPCMethodCache(router: Self.router)
        _ = readings.reading(of: [], methods: methods)
        _ = readings.reading(of: [], methods: methods)
        #expect(readings.reused == 0)
    }

    @Test func theOldestListMakesRoomAndNoMoreAreKept() {
        let readings = GRPCRequestReadings()
        let methods = GRPCMethodCache(router: Self.router)
        let lists = (0...GRPCRequestReadings.capacity).map { Self.request(extra: [HPACKHeader("x-n", "\($0)")]) }
        for list in lists { _ = readings.reading(of: list, methods: methods) }
        // The newest `capacity` are remembered; the first was replaced.
        for list in lists.dropFirst() { _ = readings.reading(of: list, methods: methods) }
        #expect(readings.reused == GRPCRequestReadings.capacity)
        _ = readings.reading(of: lists[0], methods: methods)
        #expect(readings.reused == GRPCRequestReadings.capacity)
    }

    /// What makes the memory pay: the server's connection core hands a repeated request's
    /// header list over as the very array it handed over before.
    @Test func aRepeatedRequestArrivesAsTheSameArray() throws {
        var client = HTTP2Connection(role: .client)
        var server = HTTP2Connection(role: .server)
        var lists: [[HPACKHeader]] = []
        for _ in 0..<4 {
            _ = try client.openStream(headers: Self.request(), endStream: true)
            for _ in 0..<10 {
                for case let .headers(_, headers, _) in server.receive(client.takeOutput()) { lists.append(headers) }
                _ = client.receive(server.takeOutput())
            }
        }
        try #require(lists.count == 4)
        let readings = GRPCRequestReadings()
        let methods = GRPCMethodCache(router: Self.router)
        for list in lists { _ = readings.reading(of: list, methods: methods) }
        // The first request fills the dynamic table (a block that changes it is never
        // remembered); the second is remembered with its very array, which each later
        // request arrives as.
        #expect(readings.reused == 2)
    }
}
