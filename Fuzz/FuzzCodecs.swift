// libFuzzer entry points for everything that reads untrusted bytes besides the WebSocket
// core, chosen by SWITCHBOARD_FUZZ_TARGET. Each checks what it can beyond "no crash":
//   binary    generated decoders (kitchen-sink messages): decode, encode, decode gives the
//             same value, and encoding it again gives the same bytes
//   json      generated JSON decoders: decode, encode, decode gives the same value
//   dynamic   the schema-at-run-time codecs: binary and JSON round trips as above
//   schema    the schema front end: any text compiles to a schema or diagnostics, twice
//             alike, and a schema that compiles renders Swift and .proto
//   envelope  the chat envelope reader: it decodes exactly what the generated
//             WebSocketMessage decodes, and fails exactly where that fails
// Build and run with scripts/fuzz.sh <target> [seconds].
import Foundation

let fuzzTarget = ProcessInfo.processInfo.environment["SWITCHBOARD_FUZZ_TARGET"] ?? "binary"

let kitchenSink: Schema = {
    let directory = ProcessInfo.processInfo.environment["SWITCHBOARD_FUZZ_SCHEMA"] ?? "Tests/Schemas/kitchen_sink"
    guard let schema = SchemaCompiler.compile(directory: URL(fileURLWithPath: directory)).schema else {
        fatalError("set SWITCHBOARD_FUZZ_SCHEMA to the kitchen-sink schema directory")
    }
    return schema
}()

/// A NaN makes a value unequal to an equal copy (arrays compare storage first, so not to
/// itself); for such values only the bytes can be compared.
func holdsNaN(_ value: Any) -> Bool { String(describing: value).lowercased().contains("nan") }

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// Types with a `timestamp` field, held as `Date`: outside 1933-2069 a `Date` cannot hold
/// whole microseconds, so their round trip is only required to decode again (exact
/// timestamps are issue 20's timestamp value type).
let dateHolders: Set<String> = ["Composite", "Lists", "Maps"]

/// Decode, encode, decode: the same value, and the same bytes when encoded again.
func binaryRoundTrip<M: ProtoMessage>(_ type: M.Type, _ bytes: [UInt8]) {
    guard let first = try? M(serializedBytes: bytes) else { return }
    let encoded = first.serializedBytes()
    guard let second = try? M(serializedBytes: encoded) else { fatalError("\(M.self): its own encoding does not decode") }
    if dateHolders.contains("\(M.self)") { return }
    check(second == first || holdsNaN(first), "\(M.self): binary round trip changed the value")
    check(second.serializedBytes() == encoded, "\(M.self): encoding is not stable")
}

func jsonRoundTrip<M: ProtoMessage>(_ type: M.Type, _ bytes: [UInt8]) {
    guard let first = try? M(jsonUTF8Bytes: bytes) else { return }
    guard let text = try? first.jsonUTF8Bytes() else { return } // values JSON cannot hold (NaN keys...) may refuse
    guard let second = try? M(jsonUTF8Bytes: text) else { fatalError("\(M.self): its own JSON does not decode: \(String(decoding: text, as: UTF8.self))") }
    if dateHolders.contains("\(M.self)") { return }
    check(second == first || holdsNaN(first), "\(M.self): JSON round trip changed the value")
}

func generated(_ bytes: [UInt8], _ body: (any ProtoMessage.Type, [UInt8]) -> Void) {
    guard let selector = bytes.first else { return }
    let types: [any ProtoMessage.Type] = [Scalars.self, Lists.self, Maps.self, Composite.self, TreeNode.self, Owner.self, Point.self]
    body(types[Int(selector) % types.count], Array(bytes.dropFirst()))
}

func dynamic(_ bytes: [UInt8]) {
    guard let selector = bytes.first else { return }
    let type = Int(selector) % kitchenSink.messages.count
    let payload = Data(bytes.dropFirst())
    let binary = DynamicBinaryCodec(schema: kitchenSink)
    if let first = try? binary.decode(payload, as: type) {
        guard let second = try? binary.decode(binary.encode(first), as: type) else { fatalError("dynamic: its own encoding does not decode") }
        check(second == first || holdsNaN(first), "dynamic: binary round trip changed the value")
    }
    let json = DynamicJSONCodec(schema: kitchenSink)
    if let first = try? json.decode(payload, as: type) {
        guard let second = try? json.decode(Data(json.encode(first).utf8), as: type) else { fatalError("dynamic: its own JSON does not decode") }
        // JSON input keeps a default it was given (a path slot may need it), and JSON output
        // leaves defaults out; compared by what they encode to.
        check(binary.encode(second) == binary.encode(first), "dynamic: JSON round trip changed the value")
    }
}

func schemaFrontEnd(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let first = SchemaCompiler.compile(files: [SourceFile(path: "fuzz.sb", text: text)])
    let second = SchemaCompiler.compile(files: [SourceFile(path: "fuzz.sb", text: text)])
    check(first.diagnostics == second.diagnostics, "schema: diagnostics differ between two compiles")
    guard let schema = first.schema else { return }
    _ = SwiftEmitter.generate(schema, options: SwiftEmitterOptions())
    _ = ProtoExporter.export(schema)
}

func envelope(_ bytes: [UInt8]) {
    let ours = try? IncomingEnvelope(serializedBytes: bytes[...])
    let theirs = try? WebSocketMessage(serializedBytes: bytes)
    check((ours == nil) == (theirs == nil), "envelope: the reader \(ours == nil ? "failed" : "succeeded") where the generated decoder did not")
    guard let ours, let theirs else { return }
    check(ours.type == theirs.type.map { IncomingEnvelope.Kind(rawValue: $0.rawValue) }, "envelope: types differ")
    check(ours.request?.path == theirs.request?.path && ours.request?.verb == theirs.request?.verb
          && ours.request?.body == theirs.request?.body && ours.request?.id == theirs.request?.id, "envelope: requests differ")
    check(ours.response?.id == theirs.response?.id && ours.response?.body == theirs.response?.body
          && ours.response?.message == theirs.response?.message
          && ours.response?.status.map { UInt32(truncatingIfNeeded: $0) } == theirs.response?.status, "envelope: responses differ")
    check(ours.request?.headers == theirs.request.map { headers(of: $0.headers) }, "envelope: request headers differ")
    check(ours.response?.headers == theirs.response.map { headers(of: $0.headers) }, "envelope: response headers differ")
}

/// The generated envelope's header lines, read as the chat layer reads a line.
func headers(of lines: [String]) -> RPCHeaders {
    var headers = RPCHeaders()
    for var line in lines { line.withUTF8 { EnvelopeHeaders.add(line: UnsafeRawBufferPointer($0), to: &headers) } }
    return headers
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCodecs(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: start, count: count))
    switch fuzzTarget {
    case "binary": generated(bytes) { type, payload in binaryRoundTrip(type, payload) }
    case "json": generated(bytes) { type, payload in jsonRoundTrip(type, payload) }
    case "dynamic": dynamic(bytes)
    case "schema": schemaFrontEnd(bytes)
    case "envelope": envelope(bytes)
    default: fatalError("unknown SWITCHBOARD_FUZZ_TARGET \(fuzzTarget)")
    }
    return 0
}
