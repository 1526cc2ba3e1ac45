import Foundation
import PeerSupport
import SignalChat
@testable import SwitchboardGRPC
@testable import SwitchboardHTTP2
import SwitchboardRuntime
import Testing

/// A server told which services have events (`GRPCServerOptions.eventServices`) serves only
/// their `SwitchboardEvents` and `SwitchboardAcknowledge`: the same methods of any other
/// service, unknown or without events, are UNIMPLEMENTED, trailers-only, and no subscriber
/// arrives for them. Without the option, any service's are served, as before.
@Suite(.timeLimit(.minutes(2)))
struct GRPCEventServicesTests {
    /// Messages and ChatRoom declare events; Usernames declares none.
    static let services = [Messages.descriptor, Usernames.descriptor, ChatRoom.descriptor]

    /// A server's options that name the services with events among ``services``.
    static func restrictedOptions() -> GRPCServerOptions {
        var restricted = GRPCServerOptions()
        restricted.eventServices = GRPCServerOptions.servicesWithEvents(services)
        return restricted
    }

    /// What a method resolved to, for comparing.
    static func describe(_ kind: GRPCMethod.Kind) -> String {
        switch kind {
        case .message: return "message"
        case let .events(service): return "events \(service)"
        case .acknowledge: return "acknowledge"
        case let .noEvents(service): return "no events \(service)"
        case .unknown: return "unknown"
        }
    }

    @Test func servicesWithEventsAreTheDescriptorsThatDeclareSome() {
        #expect(GRPCServerOptions.servicesWithEvents(Self.services) == ["signal.chat.Messages", "signal.chat.ChatRoom"])
        #expect(GRPCServerOptions.servicesWithEvents([Usernames.descriptor]).isEmpty)
        #expect(GRPCServerOptions().eventServices == nil, "the documented default: any service's events are served")
    }

    @Test func theEventMethodsOfOtherServicesResolveAsNoEvents() {
        let router = RPCRouter(routes: SampleHandlers().allRoutes)
        let served = GRPCServerOptions.servicesWithEvents(Self.services)
        func kind(_ path: String, _ eventServices: Set<String>?) -> String {
            Self.describe(GRPCMethod(path: path, router: router, eventServices: eventServices).kind)
        }
        #expect(kind("/signal.chat.Messages/SwitchboardEvents", served) == "events signal.chat.Messages")
        #expect(kind("/signal.chat.ChatRoom/SwitchboardEvents", served) == "events signal.chat.ChatRoom")
        #expect(kind("/signal.chat.Messages/SwitchboardAcknowledge", served) == "acknowledge")
        #expect(kind("/signal.chat.Usernames/SwitchboardEvents", served) == "no events signal.chat.Usernames")
        #expect(kind("/signal.chat.Nowhere/SwitchboardEvents", served) == "no events signal.chat.Nowhere")
        #expect(kind("/signal.chat.Usernames/SwitchboardAcknowledge", served) == "no events signal.chat.Usernames")
        #expect(kind("/signal.chat.Nowhere/SwitchboardAcknowledge", served) == "no events signal.chat.Nowhere")
        #expect(kind("//SwitchboardEvents", served) == "no events ", "a service with no name")
        // Unary methods are untouched by the option.
        #expect(kind("/" + Usernames.lookUpUsernameHash.rpcName, served) == "message")
        #expect(kind("/signal.chat.Usernames/Nothing", served) == "unknown")
        // Without it, every service's event methods are served, as before.
        #expect(kind("/signal.chat.Nowhere/SwitchboardEvents", nil) == "events signal.chat.Nowhere")
        #expect(kind("/signal.chat.Nowhere/SwitchboardAcknowledge", nil) == "acknowledge")
        #expect(kind("/signal.chat.Usernames/SwitchboardEvents", nil) == "events signal.chat.Usernames")

        // A refused path is not kept in a connection's cache (made-up service names would fill it).
        let cache = GRPCMethodCache(router: router, eventServices: served)
        #expect(Self.describe(cache.method(forPath: "/signal.chat.Nowhere/SwitchboardEvents").kind) == "no events signal.chat.Nowhere")
        #expect(Self.describe(cache.method(forPath: "/signal.chat.Usernames/SwitchboardAcknowledge").kind) == "no events signal.chat.Usernames")
        #expect(cache.cachedPathCount == 0)
        #expect(Self.describe(cache.method(forPath: "/signal.chat.Messages/SwitchboardEvents").kind) == "events signal.chat.Messages")
        #expect(cache.cachedPathCount == 1)
    }

    /// Our client's subscription to an unknown service, and to a known one without events,
    /// fails with UNIMPLEMENTED; a subscription to a service with events still opens, is the
    /// first (and only) subscriber to arrive, and its pushes are acknowledged.
    @Test func onlyTheNamedServicesCanBeSubscribedTo() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: Self.restrictedOptions())
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        for service in ["signal.chat.Nowhere", "signal.chat.Usernames"] {
            do throws(TransportError) {
                let subscription = try await transport.subscribe(toEventsOf: service) { _ in .ok }
                Issue.record("a subscription to \(service) opened")
                subscription.cancel()
            } catch {
                guard case let .grpcStatus(code, message, _) = error else {
                    Issue.record("expected UNIMPLEMENTED for \(service), got \(error)")
                    continue
                }
                #expect(code == GRPCStatusCode.unimplemented.rawValue, "\(service)")
                #expect(message.contains("no events for service '\(service)'"), "\(message)")
                #expect(message.contains("\(service)/SwitchboardEvents"), "\(message)")
            }
        }
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Messages") { _ in .ok }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        // Arrivals come in order: a refused subscription would have come first.
        #expect(subscriber.service == "signal.chat.Messages", "the refused subscriptions never arrived")
        #expect(subscriber.isOpen)
        // Its acknowledgements (`signal.chat.Messages/SwitchboardAcknowledge`) are served.
        #expect(await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30)) == 200)
        subscription.cancel()
        transport.close()
        await server.shutdown(timeout: .seconds(1))
    }

    /// On the wire: each refused call is one HEADERS frame with END_STREAM (trailers-only),
    /// `:status` 200, `grpc-status` 12 and a message naming the service, and no DATA; also
    /// when its request message came in the same read as its headers (the call hears it
    /// before it begins). A subscription to a service with events sent after them opens, and
    /// is the first subscriber to arrive.
    @Test func refusedCallsAreTrailersOnlyAndNoSubscriberArrives() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes), options: Self.restrictedOptions())
        let arrivals = server.arrivingSubscribers()
        let refused: [(stream: UInt32, service: String, path: String)] = [
            (1, "signal.chat.Nowhere", "/signal.chat.Nowhere/SwitchboardEvents"),
            (3, "signal.chat.Usernames", "/signal.chat.Usernames/SwitchboardEvents"),
            (5, "signal.chat.Nowhere", "/signal.chat.Nowhere/SwitchboardAcknowledge"),
            (7, "signal.chat.Usernames", "/signal.chat.Usernames/SwitchboardAcknowledge"),
        ]
        let accepted: UInt32 = 9
        var encoder = HPACKEncoder()
        var bytes: [UInt8] = []
        for call in refused {
            bytes += GRPCStalledCallTests.headers(call.stream, path: call.path, encoder: &encoder)
            bytes += GRPCHostilePeerTests.frame(call.stream, .data(GRPCMessageFramer.frame([])[...], endStream: true, flowControlledLength: 5))
        }
        bytes += GRPCStalledCallTests.headers(accepted, path: "/signal.chat.Messages/SwitchboardEvents", encoder: &encoder)
        bytes += GRPCHostilePeerTests.frame(accepted, .data(GRPCMessageFramer.frame([])[...], endStream: true, flowControlledLength: 5))
        let frames = await GRPCStalledCallTests.exchange(port: server.port, bytes) { frames in
            let answered = GRPCStalledCallTests.statuses(frames).count == refused.count
            let opened = frames.contains { frame in
                if case .headers = frame.payload { frame.streamID == accepted } else { false }
            }
            return answered && opened
        }

        // Every header block in order (one decoder: the blocks share its dynamic table).
        var decoder = HPACKDecoder()
        var firstHeaders: [UInt32: (headers: [HPACKHeader], endStream: Bool)] = [:]
        var streamsWithData: Set<UInt32> = []
        for frame in frames {
            switch frame.payload {
            case let .headers(fragment, endStream, _):
                guard let block = try? decoder.decode(fragment) else {
                    Issue.record("an undecodable header block on stream \(frame.streamID)")
                    continue
                }
                if firstHeaders[frame.streamID] == nil { firstHeaders[frame.streamID] = (block.headers, endStream) }
            case .data:
                streamsWithData.insert(frame.streamID)
            default:
                break
            }
        }
        for call in refused {
            guard let answer = firstHeaders[call.stream] else {
                Issue.record("no answer for \(call.path); frames: \(frames.map(\.payload))")
                continue
            }
            func value(_ name: String) -> String? { answer.headers.first { $0.name == name }?.value }
            #expect(answer.endStream, "\(call.path) is answered trailers-only")
            #expect(value(":status") == "200", "\(call.path)")
            #expect(value("grpc-status") == "\(GRPCStatusCode.unimplemented.rawValue)", "\(call.path)")
            let message = value("grpc-message").map(GRPCMetadata.decodeMessage) ?? ""
            #expect(message.contains("no events for service '\(call.service)'"), "\(call.path): \(message)")
            #expect(!streamsWithData.contains(call.stream), "\(call.path) sent no message")
        }
        let opened = try #require(firstHeaders[accepted], "the subscription to signal.chat.Messages opened")
        #expect(!opened.endStream)
        #expect(!opened.headers.contains(where: { $0.name == "grpc-status" }), "opened, not refused")

        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        #expect(subscriber.service == "signal.chat.Messages", "no subscriber arrived for the refused calls")
        // The client went away: the refused calls hold nothing of the request budget.
        #expect(await eventually(within: .seconds(10)) { server.requestBytesInFlight == 0 }, "\(server.requestBytesInFlight)")
        await server.shutdown(timeout: .seconds(1))
    }

    /// Without the option, behaviour is unchanged: a subscription to a service the server
    /// knows nothing of opens and arrives.
    @Test func withoutTheOptionAnyServiceCanBeSubscribedTo() async throws {
        let server = try GRPCServer(router: RPCRouter(routes: SampleHandlers().allRoutes))
        #expect(server.options.eventServices == nil)
        let arrivals = server.arrivingSubscribers()
        let transport = GRPCClientTransport<Authenticated>(host: "127.0.0.1", port: server.port)
        let subscription = try await transport.subscribe(toEventsOf: "signal.chat.Nowhere") { _ in .ok }
        var iterator = arrivals.makeAsyncIterator()
        let subscriber = try #require(await iterator.next())
        #expect(subscriber.service == "signal.chat.Nowhere")
        #expect(subscriber.isOpen)
        #expect(await subscriber.push(ServerRequest(verb: "PUT", path: "/api/v1/message"), timeout: .seconds(30)) == 200)
        subscription.cancel()
        transport.close()
        await server.shutdown(timeout: .seconds(1))
    }
}
