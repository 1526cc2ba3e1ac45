import Foundation
import SignalChat
import SwitchboardCatalogue
import SwitchboardRuntime
import Testing

/// A catalogue exported from the sample schema, read back by the runtime, and the check of
/// calls against it.
@Suite struct ServiceCatalogueTests {
    @Test func theExportedCatalogueReadsBackAsTheSchemaSaysIt() throws {
        let exported = try ExportedCatalogue()
        defer { exported.remove() }
        let catalogue = try ServiceCatalogue(directory: exported.directory)
        #expect(catalogue.services.map(\.spec) == ExportedCatalogue.schema.services.map(\.fullName))
        let usernames = try #require(catalogue.service("signal.chat.Usernames"))
        #expect(usernames.versions == 1...2)
        #expect(usernames.folder == "usernames")
        #expect(usernames.countries == .except(["PRK"]))
        #expect(usernames.endpoints.map(\.rpcName) == ["signal.chat.Usernames/LookUpUsernameHash"])
        #expect(usernames.endpoints.first?.folder == "look_up_username_hash")
        let room = try #require(catalogue.service("signal.chat.ChatRoom"))
        #expect(room.status == .experimental)
        #expect(room.endpoint(rpcName: "signal.chat.ChatRoom/MarkRead")?.versions == 2...2)
        #expect(room.endpoint(rpcName: "signal.chat.ChatRoom/GetHistory")?.versions == 1...2)
        // The generated descriptors carry the same metadata.
        #expect(Usernames.descriptor.countries == .except(["PRK"]))
        #expect(ChatRoom.markRead.versions == 2...2)
    }

    @Test func aBrokenCatalogueIsATypedErrorNamingTheFile() throws {
        let exported = try ExportedCatalogue()
        defer { exported.remove() }
        try exported.editIndex { $0.replacingOccurrences(of: "folder: usernames", with: "folder: ../../etc") }
        #expect(throws: CatalogueError.self) { try ServiceCatalogue(directory: exported.directory) }
        try exported.editIndex { $0.replacingOccurrences(of: "folder: ../../etc", with: "folder: usernames").replacingOccurrences(of: "versions: 1-2", with: "versions: two") }
        do {
            _ = try ServiceCatalogue(directory: exported.directory)
            Issue.record("a bad version range must not load")
        } catch {
            #expect(error.file == "services.yml")
        }
        #expect(throws: CatalogueError.self) { try ServiceCatalogue(directory: exported.directory.appendingPathComponent("nowhere")) }
    }
}

/// Counts what reaches it; answers 200.
final class CountingTransport: RPCTransport, @unchecked Sendable {
    typealias Auth = Authenticated
    let sent = Locked<[RPCRequest]>([])
    func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        sent.withLock { $0.append(request) }
        return RPCResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
    }
}

@Suite struct CatalogueInterceptorTests {
    static func service(_ spec: String, versions: ClosedRange<Int>? = 1...2, status: ServiceDescriptor.Status = .enabled,
                        countries: CountryAvailability? = nil, endpoints: [(String, ClosedRange<Int>?)]) -> ServiceCatalogue.Service {
        ServiceCatalogue.Service(spec: spec, versions: versions, folder: "f", status: status, countries: countries,
                                 endpoints: endpoints.map { .init(spec: "x", rpcName: $0.0, versions: $0.1, folder: "e") })
    }

    static let room = "signal.chat.ChatRoom"
    static let allEndpoints: [(String, ClosedRange<Int>?)] = [("\(room)/GetHistory", nil), ("\(room)/SendChatMessage", nil), ("\(room)/MarkRead", 2...2)]

    func call(_ catalogue: ServiceCatalogue, country: String? = "DEU", _ body: (ChatRoomClient) async -> TransportError?) async -> (TransportError?, [RPCRequest]) {
        let transport = CountingTransport()
        let client = ChatRoomClient(transport: transport, interceptors: [CatalogueInterceptor(catalogue: catalogue, services: [ChatRoom.descriptor], country: country)])
        let failure = await body(client)
        return (failure, transport.sent.current)
    }

    @Test func anOfferedCallCarriesTheAgreedVersion() async {
        let catalogue = ServiceCatalogue(services: [Self.service(Self.room, versions: 1...5, endpoints: Self.allEndpoints)])
        let (failure, sent) = await call(catalogue) { await $0.markRead(ReadReceipt(chatId: "c")).transportError }
        #expect(failure == nil)
        // The client speaks 1-2, the provider 1-5: they agree on 2.
        #expect(sent.first?.headers[CatalogueInterceptor.versionHeader] == "2")
        #expect(catalogue.negotiatedVersion(of: ChatRoom.descriptor) == .success(2))
    }

    @Test(arguments: [
        (ServiceCatalogue(services: []), Optional("DEU"), TransportError.unavailable(.serviceNotOffered(service: "signal.chat.ChatRoom"))),
        (ServiceCatalogue(services: [service(room, status: .disabled, endpoints: allEndpoints)]), "DEU",
         .unavailable(.serviceDisabled(service: room))),
        (ServiceCatalogue(services: [service(room, countries: .except(["CHN"]), endpoints: allEndpoints)]), "CHN",
         .unavailable(.notOfferedInCountry(service: room, country: "CHN"))),
        (ServiceCatalogue(services: [service(room, countries: .only(["USA"]), endpoints: allEndpoints)]), "DEU",
         .unavailable(.notOfferedInCountry(service: room, country: "DEU"))),
        (ServiceCatalogue(services: [service(room, countries: .only(["USA"]), endpoints: allEndpoints)]), String?.none,
         .unavailable(.notOfferedInCountry(service: room, country: nil))),
        (ServiceCatalogue(services: [service(room, versions: 3...4, endpoints: allEndpoints)]), "DEU",
         .unavailable(.noCommonVersion(service: room, client: 1...2, provider: 3...4))),
        // Agreed version 1, but markRead exists from version 2 on (on both sides).
        (ServiceCatalogue(services: [service(room, versions: 1...1, endpoints: allEndpoints)]), "DEU",
         .unavailable(.endpointNotOffered(rpcName: "\(room)/MarkRead", version: 1))),
        (ServiceCatalogue(services: [service(room, endpoints: [("\(room)/GetHistory", nil)])]), "DEU",
         .unavailable(.endpointNotOffered(rpcName: "\(room)/MarkRead", version: nil))),
    ]) func aCallTheCatalogueDoesNotOfferFailsBeforeAnythingIsSent(catalogue: ServiceCatalogue, country: String?, expected: TransportError) async {
        let (failure, sent) = await call(catalogue, country: country) { await $0.markRead(ReadReceipt(chatId: "c")).transportError }
        #expect(failure == expected)
        #expect(sent.isEmpty)
    }

    @Test func countryRulesReadAsTheCatalogueWritesThem() {
        #expect(CountryAvailability(codes: ["!CHN", "!RUS"]) == .except(["CHN", "RUS"]))
        #expect(CountryAvailability(codes: ["usa"]) == .only(["USA"]))
        #expect(CountryAvailability(codes: ["USA", "!CHN"]) == nil)
        #expect(CountryAvailability(codes: []) == nil)
        #expect(CountryAvailability.except(["CHN"]).permits("deu"))
        #expect(!CountryAvailability.except(["CHN"]).permits("chn"))
        #expect(CountryAvailability.except(["CHN"]).permits(nil))
    }
}
