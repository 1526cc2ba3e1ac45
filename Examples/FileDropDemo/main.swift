import Foundation
import SignalChat
import SwitchboardCatalogue
import SwitchboardRuntime

// A provider and a consumer of the sample schema's Usernames service through a catalogue
// folder, as two apps on one device would talk (scripts/file-drop-tests.sh drives them):
//
//   file-drop-demo provider <catalogue-dir> <served-log>
//       serves request documents with the generated handler until killed; appends each
//       username hash it serves to <served-log>, one line each.
//   file-drop-demo consumer <catalogue-dir> <count> <results-file> [<first>]
//       looks up <count> hashes (numbers <first>..., 32 at a time) and writes one line per
//       request: "<n> ok <uuid>", "<n> interrupted" or "<n> failed <reason>".

/// Appends lines to a file with O_APPEND writes: a killed process leaves whole lines.
final class AppendLog: @unchecked Sendable {
    let descriptor: Int32
    let lock = NSLock()
    init(path: String) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        precondition(descriptor >= 0, "cannot open \(path)")
    }
    func append(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        lock.withLock { _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } }
    }
}

struct LoggingUsernames: UsernamesHandler {
    let log: AppendLog
    func lookUpUsernameHash(_ request: LookUpUsernameHashRequest, context: ServerContext) async throws(Usernames.LookUpUsernameHashError) -> LookUpUsernameHashResponse {
        let number = request.hash.reduce(0) { $0 << 8 | Int($1) }
        // Served: recorded before the answer, so a kill after this line is a served request.
        log.append(String(number))
        // A little work, so kills land while requests are being served.
        try? await Task.sleep(for: .milliseconds(2))
        return LookUpUsernameHashResponse(uuid: "aci-\(number)")
    }
}

func hash(_ number: Int) -> Data { Data([UInt8(number >> 24 & 0xFF), UInt8(number >> 16 & 0xFF), UInt8(number >> 8 & 0xFF), UInt8(number & 0xFF)]) }

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    FileHandle.standardError.write(Data("usage: file-drop-demo provider <dir> <served-log> | consumer <dir> <count> <results> [<first>]\n".utf8))
    exit(2)
}
let directory = URL(fileURLWithPath: arguments[2])
let catalogue: ServiceCatalogue
do {
    catalogue = try ServiceCatalogue(directory: directory)
} catch {
    FileHandle.standardError.write(Data("file-drop-demo: \(error)\n".utf8))
    exit(1)
}

switch arguments[1] {
case "provider":
    let provider = FileDropProvider(directory: directory, catalogue: catalogue,
                                    router: RPCRouter(routes: Usernames.routes(LoggingUsernames(log: AppendLog(path: arguments[3])))))
    do {
        try provider.start()
    } catch {
        FileHandle.standardError.write(Data("file-drop-demo: \(error)\n".utf8))
        exit(1)
    }
    FileHandle.standardOutput.write(Data("provider: serving \(directory.path)\n".utf8))
    while true { try? await Task.sleep(for: .seconds(3600)) }
case "consumer":
    guard let count = Int(arguments[3]), arguments.count >= 5 else { exit(2) }
    let first = arguments.count > 5 ? Int(arguments[5]) ?? 0 : 0
    let results = AppendLog(path: arguments[4])
    let transport = FileDropTransport<Unauthenticated>(directory: directory, catalogue: catalogue, consumer: "consumer.demo")
    let client = UsernamesClient(transport: transport, interceptors: [CatalogueInterceptor(catalogue: catalogue, services: [Usernames.descriptor], country: "DEU")])
    await withTaskGroup(of: Void.self) { group in
        var running = 0
        for number in first..<(first + count) {
            if running == 32 {
                await group.next()
                running -= 1
            }
            group.addTask {
                switch await client.lookUpUsernameHash(LookUpUsernameHashRequest(hash: hash(number)), options: CallOptions(timeout: .seconds(90))) {
                case let .success(response): results.append("\(number) ok \(response.uuid)")
                case let .failure(.disconnected(reason)) where reason.detail.contains("stopped while serving"): results.append("\(number) interrupted")
                case let other: results.append("\(number) failed \(other)")
                }
            }
            running += 1
        }
    }
    print("consumer: \(count) requests answered")
default:
    exit(2)
}
