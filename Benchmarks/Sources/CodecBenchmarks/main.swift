import Foundation
import SignalChat
import SignalChatPeerMessages
import SwiftProtobuf
import SwitchboardEmitter
import SwitchboardRuntime
import SwitchboardSchema

// Codec benchmarks: ours against swift-protobuf 1.39.0 and Foundation's JSON coders,
// measured in one run on one machine so the ratios are meaningful. Prints Markdown.
//
//   CodecBenchmarks                      the report
//   CodecBenchmarks --profile <case>     spin one operation for perf
//   CodecBenchmarks --count <case> <N>   N operations only, for valgrind's instruction count
//   CodecBenchmarks --synthetic-schema <file> <messages> [--rich]   write a synthetic schema
//   CodecBenchmarks --merges <schema-dir>   only the repeated-merge check (exits 1 past its limit)

let harness = Harness()

struct Row {
    let workload: String
    let operation: String
    let ours: Double
    let peers: [(name: String, nanoseconds: Double)]
}

func measureWorkload<M: ProtoMessage, P: SwiftProtobuf.Message, C: Codable>(
    _ name: String, ours message: M, peer: P, codable: C
) throws -> [Row] {
    let ourBytes = message.serializedBytes()
    let peerBytes: [UInt8] = try peer.serializedBytes()
    let peerDecoded = try M(serializedBytes: peerBytes)
    precondition(peerDecoded == message, "peers must encode the same message")
    let ourJSON = try message.jsonUTF8Bytes()
    let peerJSON = try peer.jsonUTF8Data()
    let encoder = JSONEncoder()
    let decoder = JSONDecoder()
    let codableJSON = try encoder.encode(codable)

    var rows: [Row] = []
    var times = try harness.compare([{ message.serializedBytes().count }, { try (peer.serializedBytes() as [UInt8]).count }])
    rows.append(Row(workload: name, operation: "binary encode", ours: times[0], peers: [("swift-protobuf", times[1])]))
    times = try harness.compare([
        { try M(serializedBytes: ourBytes).unknownFields.count },
        { try P(serializedBytes: peerBytes).unknownFields.data.count },
    ])
    rows.append(Row(workload: name, operation: "binary decode", ours: times[0], peers: [("swift-protobuf", times[1])]))
    times = try harness.compare([
        { try message.jsonUTF8Bytes().count }, { try peer.jsonUTF8Data().count }, { try encoder.encode(codable).count },
    ])
    rows.append(Row(workload: name, operation: "JSON encode", ours: times[0],
                    peers: [("swift-protobuf", times[1]), ("Foundation JSONEncoder", times[2])]))
    times = try harness.compare([
        { try M(jsonUTF8Bytes: ourJSON).unknownFields.count },
        { try P(jsonUTF8Data: peerJSON).unknownFields.data.count },
        { _ = try decoder.decode(C.self, from: codableJSON); return 1 },
    ])
    rows.append(Row(workload: name, operation: "JSON decode", ours: times[0],
                    peers: [("swift-protobuf", times[1]), ("Foundation JSONDecoder", times[2])]))
    return rows
}

/// A schema of `messages` messages of 10 fields each (scalars, a list of strings, a map, an
/// enum, the previous message, a timestamp, bytes, packed ints). `rich` adds what issue 20's
/// generation goal names: a nested type in each message (held in field 10, a map of it in 11
/// instead of the flags and bytes) and a service of 100 endpoints.
func syntheticSchema(messages: Int, rich: Bool = false) -> String {
    var text = "package bench.synthetic\n\nenum Level { LEVEL_NONE = 0  LEVEL_LOW = 1  LEVEL_HIGH = 2 }\n"
    for index in 0..<messages {
        let previous = index == 0 ? "Level" : "Message\(index - 1)?"
        let tail = rich
            ? "  message Detail { 1 note: string  2 score: int32 }\n  9 detail: Detail\n  10 details: {string: Detail}\n"
            : "  9 payload: bytes\n  10 flags: [int32]\n"
        text += """

            /// Synthetic message \(index).
            message Message\(index) {
              1 id: string
              2 count: uint64
              3 ratio: double
              4 tags: [string]
              5 attributes: {string: string}
              6 level: Level
              7 previous: \(previous)
              8 createdAt: timestamp
            \(tail)}

            """
    }
    if rich {
        text += "\n/// A hundred endpoints over the messages.\nservice Synthetic {\n  auth none\n"
        for index in 0..<min(100, messages) {
            text += "  rpc call\(index)(Message\(index)) -> Message\((index + 1) % messages) { POST \"/v1/call/\(index)\" }\n"
        }
        text += "}\n"
    }
    return text
}

func formatNanoseconds(_ value: Double) -> String {
    value >= 10_000 ? String(format: "%.1f µs", value / 1000) : String(format: "%.0f ns", value)
}

let arguments = CommandLine.arguments
if let index = arguments.firstIndex(of: "--synthetic-schema"), index + 2 < arguments.count {
    try syntheticSchema(messages: Int(arguments[index + 2]) ?? 200, rich: arguments.contains("--rich"))
        .write(toFile: arguments[index + 1], atomically: true, encoding: .utf8)
    exit(0)
}

if let index = arguments.firstIndex(of: "--profile"), index + 1 < arguments.count {
    let envelopeBytes = Workloads.envelope.serializedBytes()
    let chatBytes = Workloads.chatMessage.serializedBytes()
    let chatJSON = try Workloads.chatMessage.jsonUTF8Bytes()
    var total = 0
    for _ in 0..<2_000_000 {
        switch arguments[index + 1] {
        case "envelope-encode": total &+= Workloads.envelope.serializedBytes().count
        case "envelope-decode": total &+= try WebSocketMessage(serializedBytes: envelopeBytes).unknownFields.count
        case "chat-encode": total &+= Workloads.chatMessage.serializedBytes().count
        case "chat-decode": total &+= try ChatMessage(serializedBytes: chatBytes).unknownFields.count
        case "chat-json-encode": total &+= try Workloads.chatMessage.jsonUTF8Bytes().count
        case "chat-json-decode": total &+= try ChatMessage(jsonUTF8Bytes: chatJSON).unknownFields.count
        default: fatalError("unknown profile case")
        }
    }
    print(total)
    exit(0)
}

/// 100 routes for the route lookup cases.
enum RouteLookup {
    static let endpoints = (0..<100).map { EndpointDescriptor(rpcName: "bench.R/Get\($0)", verb: "GET", pathTemplate: "/v1/resource\($0)/{id}", auth: .none) }
    static let templates = endpoints.map { PathTemplate($0.pathTemplate) }
    static func router(_ count: Int) -> RPCRouter {
        RPCRouter(routes: endpoints.prefix(count).map { RPCRoute(endpoint: $0) { _, _ in RPCResponse(status: 200) } })
    }
    static let path = "/v1/resource99/abc"
}

// `--count <case> <N>`: N operations and nothing else, ours or swift-protobuf's (`peer-` cases),
// for an instruction count (valgrind); run with N and 2N, the difference is N operations.
if let index = arguments.firstIndex(of: "--count"), index + 2 < arguments.count, let count = Int(arguments[index + 2]) {
    let envelopeBytes = Workloads.envelope.serializedBytes()
    let envelopeData = try Workloads.envelopePeer.serializedData()
    let envelopeJSON = try Workloads.envelope.jsonUTF8Bytes()
    let chatBytes = Workloads.chatMessage.serializedBytes()
    let chatJSON = try Workloads.chatMessage.jsonUTF8Bytes()
    var total = 0
    switch arguments[index + 1] {
    case "envelope-json-encode": for _ in 0..<count { total &+= try Workloads.envelope.jsonUTF8Bytes().count }
    case "envelope-json-decode": for _ in 0..<count { total &+= try WebSocketMessage(jsonUTF8Bytes: envelopeJSON).unknownFields.count }
    case "chat-encode": for _ in 0..<count { total &+= Workloads.chatMessage.serializedBytes().count }
    case "chat-decode": for _ in 0..<count { total &+= try ChatMessage(serializedBytes: chatBytes).unknownFields.count }
    case "chat-json-encode": for _ in 0..<count { total &+= try Workloads.chatMessage.jsonUTF8Bytes().count }
    case "chat-json-decode": for _ in 0..<count { total &+= try ChatMessage(jsonUTF8Bytes: chatJSON).unknownFields.count }
    // Both codecs with the same container, [UInt8] as the timed comparison above uses ...
    case "envelope-encode": for _ in 0..<count { total &+= Workloads.envelope.serializedBytes().count }
    case "envelope-decode": for _ in 0..<count { total &+= try WebSocketMessage(serializedBytes: envelopeBytes).unknownFields.count }
    case "peer-envelope-encode": for _ in 0..<count { total &+= try (Workloads.envelopePeer.serializedBytes() as [UInt8]).count }
    case "peer-envelope-decode": for _ in 0..<count { total &+= try Signal_Chat_WebSocketMessage(serializedBytes: envelopeBytes).unknownFields.data.count }
    // ... and both with Data.
    case "envelope-encode-data": for _ in 0..<count { total &+= Workloads.envelope.serializedData().count }
    case "envelope-decode-data": for _ in 0..<count { total &+= try WebSocketMessage(serializedData: envelopeData).unknownFields.count }
    case "peer-envelope-encode-data": for _ in 0..<count { total &+= try Workloads.envelopePeer.serializedData().count }
    case "peer-envelope-decode-data": for _ in 0..<count { total &+= try Signal_Chat_WebSocketMessage(serializedBytes: envelopeData).unknownFields.data.count }
    // Trying all 100 templates for the last one, as the router did before its index; compare
    // `route-100` (below), the same lookup through the router.
    case "route-scan-100":
        for _ in 0..<count { total &+= RouteLookup.templates.filter { $0.parameters(matching: RouteLookup.path[...]) != nil }.count }
    // `RPCRouter.endpoints(verb:path:)` among N routes, the last one asked: up to
    // `RPCRouter.indexedRouteCount` routes each template is tried, beyond it the index walks.
    case let name where name.hasPrefix("route-") && Int(name.dropFirst(6)) != nil:
        let routes = Int(name.dropFirst(6))!
        let router = RouteLookup.router(routes)
        let path = "/v1/resource\(routes - 1)/abc"
        for _ in 0..<count { total &+= router.endpoints(verb: "GET", path: path).count }
    default: fatalError("unknown count case")
    }
    print(total)
    exit(0)
}

if let index = arguments.firstIndex(of: "--merges"), index + 1 < arguments.count {
    let (report, passed) = try RepeatedMerges.run(schemaDirectory: URL(fileURLWithPath: arguments[index + 1]))
    print(report, terminator: "")
    exit(passed ? 0 : 1)
}

var rows: [Row] = []
rows += try measureWorkload("Envelope (3 headers, 256 B body)", ours: Workloads.envelope, peer: Workloads.envelopePeer, codable: Workloads.envelopeCodable)
rows += try measureWorkload("ChatMessage (2 attachments, 2 extras)", ours: Workloads.chatMessage, peer: Workloads.chatMessagePeer, codable: Workloads.chatMessageCodable)

print("| Workload | Operation | Switchboard | Peer | Peer time | Speed-up |")
print("|---|---|---:|---|---:|---:|")
for row in rows {
    for peer in row.peers {
        print("| \(row.workload) | \(row.operation) | \(formatNanoseconds(row.ours)) | \(peer.name) | \(formatNanoseconds(peer.nanoseconds)) | \(String(format: "%.1f×", peer.nanoseconds / row.ours)) |")
    }
}

// Generation speed: front end, emitter and renderer for 1,000 rich messages (nested types,
// maps, lists, 100 endpoints), in process.
let schemaText = syntheticSchema(messages: 1000, rich: true)
var generatedFiles = 0
let generationSeconds = try Harness(budget: 3, rounds: 3).measure {
    let output = SchemaCompiler.compile(files: [SourceFile(path: "synthetic.sb", text: schemaText)])
    let files = SwiftEmitter.generate(output.schema!, options: SwiftEmitterOptions())
    generatedFiles = files.count
    return files.count
} / 1e9
print("")
print("Generation of a synthetic schema with 1,000 messages and 100 endpoints, in process (\(generatedFiles) files): \(String(format: "%.3f", generationSeconds)) s")
print("<!-- sink \(Harness.sink % 10) -->")
