import Foundation
import SwitchboardRuntime

/// A transport that carries each call as a document in a provider's catalogue folder: it
/// writes the request document into the endpoint's folder (atomically: a hidden temporary
/// file, then a rename to `<timestamp>_<endpoint>_<random>.request.json`) and waits for the
/// provider's `<id>.response.json` next to it. Requests and answers stay as plain files, to
/// list (``records()``), inspect, and resubmit (``resubmit(_:)``).
///
/// A provider that stopped while serving a request answers it as interrupted, and the call
/// fails with `TransportError.disconnected`: it is never served twice, but it may
/// have taken effect.
public struct FileDropTransport<Auth: AuthMode>: DeadlineEnforcingTransport {
    /// The catalogue's folder.
    public let directory: URL
    /// The provider's catalogue, which names each endpoint's folder.
    public let catalogue: ServiceCatalogue
    /// A subfolder of each endpoint folder for this consumer's documents (such as its bundle
    /// id), or `nil` to write into the endpoint folder itself.
    public let consumer: String?
    /// Timing and limits.
    public let options: FileDropOptions
    private let files = FileDropFiles.queue("transport")

    /// A transport through the catalogue at `directory`.
    public init(directory: URL, catalogue: ServiceCatalogue, consumer: String? = nil, options: FileDropOptions = FileDropOptions(), as auth: Auth.Type = Auth.self) {
        self.directory = directory
        self.catalogue = catalogue
        self.consumer = consumer
        self.options = options
    }

    /// Whether `consumer` names one plain subfolder (no separator, not hidden, not `..`, not
    /// ending in `.json`, at most 255 bytes in UTF-8), which the provider scans and which
    /// stays inside the catalogue. The provider takes a `.json` name for a document, never a
    /// subfolder to scan (`x.request.json` for a request), so calls through it would wait out
    /// their deadlines.
    public static func isValidConsumerName(_ consumer: String) -> Bool {
        !consumer.isEmpty && !consumer.hasPrefix(".") && consumer != FileDropDocument.archiveFolder && !consumer.contains("/")
            && !consumer.contains("\0") && !consumer.hasSuffix(".json") && consumer.utf8.count <= 255
    }

    /// The folder of `rpcName`'s documents; `nil` if the catalogue does not offer it, or the
    /// consumer name is not a plain folder name.
    public func folder(for rpcName: String) -> URL? {
        if let consumer, !Self.isValidConsumerName(consumer) { return nil }
        let service = String(rpcName.split(separator: "/", maxSplits: 1).first ?? "")
        guard let offered = catalogue.service(service), let endpoint = offered.endpoint(rpcName: rpcName) else { return nil }
        return folder(of: offered, endpoint)
    }

    /// The folder of `endpoint`'s documents in `service`, this consumer's subfolder if it has
    /// one (its name checked by the caller).
    func folder(of service: ServiceCatalogue.Service, _ endpoint: ServiceCatalogue.Endpoint) -> URL {
        var folder = directory.appendingPathComponent(service.folder).appendingPathComponent(endpoint.folder)
        if let consumer { folder.appendPathComponent(consumer) }
        return folder
    }

    /// The folders below ``directory`` that lead to `rpcName`'s documents; `nil` as for
    /// ``folder(for:)``.
    func folderComponents(for rpcName: String) -> [String]? {
        if let consumer, !Self.isValidConsumerName(consumer) { return nil }
        let service = String(rpcName.split(separator: "/", maxSplits: 1).first ?? "")
        guard let offered = catalogue.service(service), let endpoint = offered.endpoint(rpcName: rpcName) else { return nil }
        // A catalogue's folder may be several levels (`chat/rooms`): one component each.
        return ([offered.folder, endpoint.folder] + (consumer.map { [$0] } ?? [])).flatMap { $0.split(separator: "/").map(String.init) }
    }

    /// Opens (making what is missing) each folder of `components` below ``directory``, each a
    /// folder itself, never a link: anyone who can write to the shared catalogue could
    /// otherwise swap a folder for a link and have this consumer write its requests, and
    /// move files, wherever the link points (found by review). Worked in by its descriptor.
    static func openFolder(_ directory: URL, _ components: [String]) throws(POSIXError) -> FileDropFiles.OpenFolder {
        var folder = try FileDropFiles.OpenFolder(root: directory, [])
        for component in components { folder = try folder.subfolder(component, creating: true) }
        return folder
    }

    public func send(_ request: RPCRequest) async throws(TransportError) -> RPCResponse {
        if let consumer, !Self.isValidConsumerName(consumer) {
            throw .invalidRequest("the consumer name '\(consumer.prefix(100))' must be one plain folder name (no '/', not starting with '.', not ending in '.json', at most 255 bytes)")
        }
        guard let components = folderComponents(for: request.endpoint.rpcName) else {
            throw .unavailable(.endpointNotOffered(rpcName: request.endpoint.rpcName, version: nil))
        }
        // A call already over is not written: a provider could still claim and serve it.
        if Task.isCancelled { throw .cancelled }
        if let deadline = request.deadline, ContinuousClock.now >= deadline { throw .timeout }
        let spec = String(request.endpoint.rpcName.split(separator: "/").last ?? "request")
        let id = Self.newID(spec: spec)
        let document = FileDropDocument.Request(
            id: id, spec: spec, rpcName: request.endpoint.rpcName,
            version: request.headers[CatalogueInterceptor.versionHeader].flatMap { Int($0) },
            verb: request.verb, path: request.path, headers: request.headers, body: request.body, auth: request.endpoint.auth)
        let durable = options.durable, limit = options.maximumDocumentBytes, directory = directory
        let written: Result<FileDropFiles.OpenFolder, TransportError> = await FileDropFiles.offPool(on: files) {
            let encoded: Data
            do {
                encoded = try FileDropDocument.encode(document)
            } catch {
                return .failure(.invalidRequest("cannot encode the request document: \(error)"))
            }
            // Checked before writing: the provider would only refuse it after it sat on disk.
            guard encoded.count <= limit else {
                return .failure(.invalidRequest("cannot write the request document: it would be \(encoded.count) bytes; the limit is \(limit)"))
            }
            do {
                let folder = try Self.openFolder(directory, components)
                try FileDropFiles.writeAtomically(encoded, to: folder.entry(id + FileDropDocument.requestSuffix), durable: durable)
                return .success(folder)
            } catch {
                return .failure(.invalidRequest("cannot write the request document in \(components.joined(separator: "/")): \(error)"))
            }
        }
        return try await awaitResponse(id: id, in: written.get(), deadline: request.deadline)
    }

    /// Waits for the response to request `id` until `deadline`, then archives the pair.
    func awaitResponse(id: String, in folder: FileDropFiles.OpenFolder, deadline: ContinuousClock.Instant?) async throws(TransportError) -> RPCResponse {
        let responseName = id + FileDropDocument.responseSuffix
        while true {
            if folder.exists(responseName) {
                let limit = options.maximumDocumentBytes
                let read = await FileDropFiles.offPool(on: files) { () -> Data? in
                    if case let .read(data) = FileDropFiles.readRegularFile(folder.entry(responseName), limit: limit, followingLinks: false) { return data }
                    return nil
                }
                guard let data = read, let (response, interrupted) = FileDropDocument.decodeResponse(data) else {
                    throw .unexpectedResponse("the response document \(responseName) is malformed or too large")
                }
                await FileDropFiles.offPool(on: files) { archive(id, in: folder) }
                if interrupted {
                    throw .disconnected(reason: "the provider stopped while serving \(id); it was not served again and may or may not have taken effect")
                }
                return response
            }
            var failure: TransportError?
            if Task.isCancelled { failure = .cancelled }
            else if let deadline, ContinuousClock.now >= deadline { failure = .timeout }
            else {
                do {
                    try await Task.sleep(for: options.effectivePollInterval)
                } catch {
                    failure = .cancelled
                }
            }
            if let failure {
                // Withdrawn before a provider took it, it is never served; if the withdrawal
                // loses, a provider has it and its answer will be on file.
                let durable = options.durable
                await FileDropFiles.offPool(on: files) {
                    _ = FileDropFiles.move(folder.entry(id + FileDropDocument.requestSuffix),
                                           to: folder.entry(id + FileDropDocument.withdrawnSuffix), durable: durable)
                }
                throw failure
            }
        }
    }

    /// Moves an answered request's documents out of the folder the provider polls.
    func archive(_ id: String, in folder: FileDropFiles.OpenFolder) {
        guard let archive = try? folder.subfolder(FileDropDocument.archiveFolder, creating: true) else { return }
        for suffix in [FileDropDocument.servedSuffix, FileDropDocument.responseSuffix] {
            _ = FileDropFiles.move(folder.entry(id + suffix), to: archive.entry(id + suffix), durable: false)
        }
    }

    /// `20261126T140512345Z_lookUpUsernameHash_1a2b3c4d`: names sort by submission time. A
    /// long `spec` is cut short (between characters) so that the id stays within
    /// ``FileDropDocument/maximumIDBytes``; the document keeps it whole.
    static func newID(spec: String) -> String {
        let now = Date()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: now)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let stamp = pad(parts.year, 4) + pad(parts.month, 2) + pad(parts.day, 2) + "T" + pad(parts.hour, 2) + pad(parts.minute, 2)
            + pad(parts.second, 2) + pad((parts.nanosecond ?? 0) / 1_000_000, 3) + "Z"
        let random = String(UInt32.random(in: .min ... .max), radix: 16)
        let room = FileDropDocument.maximumIDBytes - stamp.utf8.count - "__".utf8.count - 8
        var bytes = 0
        let name = spec.prefix { character in
            bytes += character.utf8.count
            return bytes <= room
        }
        return stamp + "_" + String(name) + "_" + String(repeating: "0", count: 8 - random.count) + random
    }

    // MARK: Inspecting

    /// Where a request stands, read from its files.
    public enum State: String, Sendable, Hashable {
        /// Written; no provider has taken it yet.
        case submitted
        /// A provider is serving it (or stopped while serving it, until it restarts).
        case claimed
        /// Answered; the response document is next to it.
        case answered
        /// Given up by its consumer before any provider took it: never served.
        case withdrawn
    }

    /// One request document of this consumer.
    public struct Record: Sendable, Hashable {
        /// The request's id: its file names start with it.
        public var id: String
        /// `package.Service/Method`.
        public var rpcName: String
        /// Where it stands.
        public var state: State
        /// The request document.
        public var requestFile: URL
        /// The response document, once answered.
        public var responseFile: URL?
    }

    /// Every request this consumer's folders hold (archived ones included), oldest first.
    public func records() -> [Record] {
        if let consumer, !Self.isValidConsumerName(consumer) { return [] }
        var records: [Record] = []
        for service in catalogue.services {
            for endpoint in service.endpoints {
                // Each endpoint's own folder, not looked up again by its rpc name.
                let base = folder(of: service, endpoint)
                for folder in [base, base.appendingPathComponent(FileDropDocument.archiveFolder)] {
                    let names = FileDropFiles.names(in: folder)
                    let present = Set(names)
                    for name in names where !name.hasPrefix(".") {
                        let (id, state): (String, State)
                        if name.hasSuffix(FileDropDocument.requestSuffix) { (id, state) = (String(name.dropLast(FileDropDocument.requestSuffix.count)), .submitted) }
                        else if name.hasSuffix(FileDropDocument.claimedSuffix) { (id, state) = (String(name.dropLast(FileDropDocument.claimedSuffix.count)), .claimed) }
                        else if name.hasSuffix(FileDropDocument.servedSuffix) { (id, state) = (String(name.dropLast(FileDropDocument.servedSuffix.count)), .answered) }
                        else if name.hasSuffix(FileDropDocument.withdrawnSuffix) { (id, state) = (String(name.dropLast(FileDropDocument.withdrawnSuffix.count)), .withdrawn) }
                        else { continue }
                        let response = id + FileDropDocument.responseSuffix
                        records.append(Record(id: id, rpcName: endpoint.rpcName, state: present.contains(response) ? .answered : state,
                                              requestFile: folder.appendingPathComponent(name),
                                              responseFile: present.contains(response) ? folder.appendingPathComponent(response) : nil))
                    }
                }
            }
        }
        return records.sorted { $0.id < $1.id }
    }

    /// Submits a copy of an earlier request as a new request (a new id), such as one whose
    /// provider was interrupted; returns the new id. The earlier documents stay as they are.
    public func resubmit(_ record: Record) throws(TransportError) -> String {
        guard let data = FileDropFiles.readDocument(record.requestFile, limit: options.maximumDocumentBytes),
              var document = FileDropDocument.decodeRequest(data) else {
            throw .invalidRequest("\(record.requestFile.lastPathComponent) is not a request document")
        }
        document.id = Self.newID(spec: document.spec)
        // Back into the folder the provider polls for its endpoint, even if it was archived.
        guard let components = folderComponents(for: record.rpcName) else {
            throw .unavailable(.endpointNotOffered(rpcName: record.rpcName, version: nil))
        }
        do {
            let folder = try Self.openFolder(directory, components)
            try FileDropFiles.writeAtomically(try FileDropDocument.encode(document),
                                              to: folder.entry(document.id + FileDropDocument.requestSuffix), durable: options.durable)
        } catch {
            throw .invalidRequest("cannot write the request document: \(error)")
        }
        return document.id
    }
}
