import Foundation
import KitchenSink
import SwitchboardRuntime
import Testing

/// Endpoints whose only inputs are keys: the generated client sends them as headers, and the
/// generated mock records them (a lone key as itself, since Swift has no one-element tuple;
/// the generator once emitted `(feedToken: FeedToken)`, which does not compile).
@Suite struct KeyOnlyEndpointTests {
    @Test func theMockRecordsTheKeys() async throws {
        let mock = MockFeedsService()
        mock.latestMock.stub(returning: .success(NumberPage(more: true)))
        mock.signedMock.stub(returning: .nonSuccess(.unrecognized(status: 418, body: Data())))
        let token = FeedToken(Data([1, 2]))
        #expect(try await mock.latest(feedToken: token).get() == NumberPage(more: true))
        #expect(mock.latestMock.calls == [token])
        _ = await mock.signed(feedToken: token, feedSignature: FeedSignature(Data([3])), options: CallOptions())
        #expect(mock.signedMock.calls.map(\.feedToken) == [token])
        #expect(mock.signedMock.calls.map(\.feedSignature) == [FeedSignature(Data([3]))])
    }

    /// Without a request, the default-options form returns the result (a `try` around a
    /// throwing form with the call's own arguments once caught nothing: Swift picked the
    /// non-throwing call); `.get()` throws the endpoint error.
    @Test func aCallWithoutARequestReturnsItsResult() async throws {
        let mock = MockFeedsService()
        mock.latestMock.stub(returning: .nonSuccess(.unrecognized(status: 418, body: Data())))
        let result = await mock.latest(feedToken: FeedToken(Data([1])))
        guard case .nonSuccess(.unrecognized(status: 418, _)) = result else {
            Issue.record("the declared failure must come back, got \(result)")
            return
        }
        await #expect(throws: RequestError<Feeds.LatestError>.self) { try await mock.latest(feedToken: FeedToken(Data([1]))).get() }
    }

    @Test func theClientSendsTheKeysAsHeaders() async throws {
        let transport = CapturingTransport<Unauthenticated>()
        _ = await FeedsClient(transport: transport).signed(feedToken: FeedToken(Data([0xFB, 0xFF])), feedSignature: FeedSignature(Data([7])), options: CallOptions())
        let request = try #require(transport.captured.current)
        #expect(request.verb == "GET")
        #expect(request.path == "/feeds/signed")
        #expect(request.headers["Feed-Token"] == "+/8=")
        #expect(request.headers["Feed-Signature"] == "Bw==")
        #expect(request.body == nil)
    }
}
