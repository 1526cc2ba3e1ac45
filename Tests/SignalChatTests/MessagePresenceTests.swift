import Foundation
import SignalChat
import SwitchboardRuntime
import Testing

/// A singular message field keeps whether it was set, as protobuf does, and says so:
/// `hasX` tells an empty message sent from one never sent, `clearX()` unsets it (from the
/// API review: the presence was kept but could not be read or undone).
@Suite struct MessagePresenceTests {
    @Test func presenceIsReadableAndCanBeCleared() throws {
        var message = ChatMessage(id: "1")
        #expect(!message.hasCreatedAt)
        #expect(message.createdAt == ProtoTimestamp())
        message.createdAt = ProtoTimestamp()
        #expect(message.hasCreatedAt, "set to an empty message is set")
        let decoded = try ChatMessage(serializedBytes: message.serializedBytes())
        #expect(decoded.hasCreatedAt, "an empty message sent arrives as set")
        #expect(try ChatMessage(jsonString: message.jsonString()).hasCreatedAt)
        message.clearCreatedAt()
        #expect(!message.hasCreatedAt)
        #expect(message.serializedBytes() == ChatMessage(id: "1").serializedBytes(), "a cleared field is not written")
        #expect(!(try ChatMessage(serializedBytes: message.serializedBytes())).hasCreatedAt)
    }

    /// JSON in `Data`, by swift-protobuf's names.
    @Test func jsonInDataRoundTrips() throws {
        let message = ChatMessage(id: "1", senderId: 7)
        let data = try message.jsonUTF8Data()
        #expect(data == Data(try message.jsonUTF8Bytes()))
        #expect(try ChatMessage(jsonUTF8Data: data) == message)
    }
}

/// A handler reads a schema key from its request: the header decoded into the key's type, or
/// nil when absent, repeated or malformed (handlers decoded base64 headers by hand).
@Suite struct RequestKeyTests {
    @Test func aHandlerReadsItsKeyFromTheContext() {
        let key = AccessKey(Data([1, 2, 3]))
        #expect(AccessKey(headerValue: key.headerValue) == key)
        #expect(ServerContext(auth: .none, headers: [AccessKey.headerName: key.headerValue]).key(AccessKey.self) == key)
        #expect(ServerContext(auth: .none, headers: ["unidentified-access-key": key.headerValue]).key(AccessKey.self) == key, "header names ignore case")
        #expect(ServerContext(auth: .none).key(AccessKey.self) == nil)
        #expect(ServerContext(auth: .none, headers: [AccessKey.headerName: "not base64!"]).key(AccessKey.self) == nil)
        var twice = RPCHeaders()
        twice.add(AccessKey.headerName, key.headerValue)
        twice.add(AccessKey.headerName, key.headerValue)
        #expect(ServerContext(auth: .none, headers: twice).key(AccessKey.self) == nil, "given twice is no key")
    }
}
