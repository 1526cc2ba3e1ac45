import Foundation
import SignalChat
import SignalChatPeerMessages
import SwiftProtobuf
import SwitchboardRuntime

/// The two workloads the issue names, built identically for every peer.
enum Workloads {
    static let body = Data((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    static let headers = ["content-type:application/x-protobuf", "x-signal-timestamp:1700000000000", "user-agent:Switchboard/1.0 (Linux)"]
    static let created = Date(timeIntervalSince1970: 1_700_000_000.25)

    // MARK: Envelope: a request with 3 headers and a 256-byte body.

    static let envelope = WebSocketMessage(
        type: .request,
        request: WebSocketRequestMessage(verb: "PUT", path: "/api/v1/message", body: body, headers: headers, id: 1_234_567))

    static let envelopePeer: Signal_Chat_WebSocketMessage = {
        var message = Signal_Chat_WebSocketMessage()
        message.type = .request
        message.request.verb = "PUT"
        message.request.path = "/api/v1/message"
        message.request.body = body
        message.request.headers = headers
        message.request.id = 1_234_567
        return message
    }()

    static let envelopeCodable = CodableEnvelope(
        type: 1, request: .init(verb: "PUT", path: "/api/v1/message", body: body, headers: headers, id: 1_234_567))

    // MARK: ChatMessage: 2 attachments, 2 extras, non-ASCII text.

    static let text = "Grüße aus Köln! Привет, как дела? 👋 Let's meet at the café at 5."

    static let chatMessage = ChatMessage(
        id: "msg-7f3a9c", senderId: 1_234_567_890_123, text: text, status: .read, createdAt: ProtoTimestamp(date: created),
        attachments: [
            Attachment(id: "att-1", contentType: "image/jpeg", size: 204_800, digest: Data(repeating: 0xAB, count: 32), width: 640, height: 480, cdn: 3),
            Attachment(id: "att-2", contentType: "application/pdf", size: 1_048_576, digest: Data(repeating: 0xCD, count: 32), fileName: "notes.pdf"),
        ],
        extras: ["client": "ios", "locale": "de-DE"], replyTo: "msg-7f3a9b")

    static let chatMessagePeer: Signal_Chat_ChatMessage = {
        var message = Signal_Chat_ChatMessage()
        message.id = "msg-7f3a9c"
        message.senderID = 1_234_567_890_123
        message.text = text
        message.status = .read
        message.createdAt = Google_Protobuf_Timestamp(date: created)
        var first = Signal_Chat_Attachment()
        first.id = "att-1"; first.contentType = "image/jpeg"; first.size = 204_800
        first.digest = Data(repeating: 0xAB, count: 32); first.width = 640; first.height = 480; first.cdn = 3
        var second = Signal_Chat_Attachment()
        second.id = "att-2"; second.contentType = "application/pdf"; second.size = 1_048_576
        second.digest = Data(repeating: 0xCD, count: 32); second.fileName = "notes.pdf"
        message.attachments = [first, second]
        message.extras = ["client": "ios", "locale": "de-DE"]
        message.replyTo = "msg-7f3a9b"
        return message
    }()

    static let chatMessageCodable = CodableChatMessage(
        id: "msg-7f3a9c", senderId: "1234567890123", text: text, status: "read", createdAt: created,
        attachments: [
            .init(id: "att-1", contentType: "image/jpeg", size: "204800", digest: Data(repeating: 0xAB, count: 32), fileName: nil, width: 640, height: 480, cdn: 3),
            .init(id: "att-2", contentType: "application/pdf", size: "1048576", digest: Data(repeating: 0xCD, count: 32), fileName: "notes.pdf", width: nil, height: nil, cdn: nil),
        ],
        extras: ["client": "ios", "locale": "de-DE"], replyTo: "msg-7f3a9b")
}

/// Codable mirrors of the same data, the shape an app would hand to JSONEncoder.
struct CodableEnvelope: Codable {
    struct Request: Codable {
        var verb: String
        var path: String
        var body: Data
        var headers: [String]
        var id: UInt64
    }
    var type: Int
    var request: Request
}

struct CodableChatMessage: Codable {
    struct Attachment: Codable {
        var id: String
        var contentType: String
        var size: String
        var digest: Data
        var fileName: String?
        var width: UInt32?
        var height: UInt32?
        var cdn: UInt32?
    }
    var id: String
    var senderId: String
    var text: String
    var status: String
    var createdAt: Date
    var attachments: [Attachment]
    var extras: [String: String]
    var replyTo: String?
}
