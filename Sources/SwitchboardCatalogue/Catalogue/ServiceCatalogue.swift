import Foundation
import SwitchboardRuntime

/// A provider's published catalogue of services (`services.yml` and each service's
/// `definition.yml`, as `switchboard export-catalogue` writes them): which services it
/// offers, in which versions, where, and in which folders their request documents go.
public struct ServiceCatalogue: Sendable, Hashable {
    /// One offered service.
    public struct Service: Sendable, Hashable {
        /// `package.Service`, as the schema and generated descriptors name it.
        public var spec: String
        /// The versions the provider serves.
        public var versions: ClosedRange<Int>?
        /// The service's folder, relative to the catalogue.
        public var folder: String
        /// Whether the provider offers it now.
        public var status: ServiceDescriptor.Status
        /// Where the provider offers it; `nil`: everywhere.
        public var countries: CountryAvailability?
        /// The endpoints the provider serves, by rpc name.
        public var endpoints: [Endpoint]

        /// A service entry.
        public init(spec: String, versions: ClosedRange<Int>?, folder: String, status: ServiceDescriptor.Status,
                    countries: CountryAvailability?, endpoints: [Endpoint]) {
            self.spec = spec
            self.versions = versions
            self.folder = folder
            self.status = status
            self.countries = countries
            self.endpoints = endpoints
        }

        /// The endpoint with this rpc name (`package.Service/Method`).
        public func endpoint(rpcName: String) -> Endpoint? { endpoints.first { $0.rpcName == rpcName } }
    }

    /// One endpoint of a service.
    public struct Endpoint: Sendable, Hashable {
        /// The rpc's schema name, such as `lookUpUsernameHash`.
        public var spec: String
        /// `package.Service/Method`.
        public var rpcName: String
        /// The service versions that offer it; `nil`: every version of the service.
        public var versions: ClosedRange<Int>?
        /// The folder request documents go into, relative to the service's folder.
        public var folder: String

        /// An endpoint entry.
        public init(spec: String, rpcName: String, versions: ClosedRange<Int>?, folder: String) {
            self.spec = spec
            self.rpcName = rpcName
            self.versions = versions
            self.folder = folder
        }
    }

    /// The catalogue's own format version.
    public var formatVersion: Int
    /// The services, in the catalogue's order.
    public var services: [Service]

    /// The service named `spec` (`package.Service`).
    public func service(_ spec: String) -> Service? { services.first { $0.spec == spec } }

    /// Reads `services.yml` and each service's `definition.yml` under `directory`, each file
    /// within `limits`.
    public init(directory: URL, limits: CatalogueYAML.Limits = CatalogueYAML.Limits()) throws(CatalogueError) {
        var budget = limits.maximumTotalBytes
        let index = try Self.read("services.yml", in: directory, limits: limits, budget: &budget)
        guard try index.text(at: "spec", file: "services.yml") == "Services" else { throw CatalogueError(file: "services.yml", "'spec' must be 'Services'") }
        formatVersion = Int(try index.text(at: "versions", file: "services.yml") ?? "1") ?? 0
        guard formatVersion == 1 else { throw CatalogueError(file: "services.yml", "catalogue format version \(formatVersion) is not supported (1 is)") }
        var services: [Service] = []
        var specs = Set<String>(), folders = Set<String>()
        for entry in try index.items(at: "services", file: "services.yml") ?? [] {
            guard let spec = try entry.text(at: "spec", file: "services.yml"), let folder = try entry.text(at: "folder", file: "services.yml", of: spec) else {
                throw CatalogueError(file: "services.yml", "each service needs 'spec' and 'folder'")
            }
            guard Self.isSafeFolder(folder) else { throw CatalogueError(file: "services.yml", "folder '\(folder)' of \(spec) must be a plain relative name") }
            guard specs.insert(spec).inserted else { throw CatalogueError(file: "services.yml", "\(spec) is listed twice") }
            // Compared without case: on a case-insensitive file system (Apple platforms' default)
            // `Usernames` and `usernames` are one folder.
            guard folders.insert(folder.lowercased()).inserted else { throw CatalogueError(file: "services.yml", "folder '\(folder)' is given to two services") }
            var service = Service(spec: spec, versions: nil, folder: folder, status: .enabled, countries: nil, endpoints: [])
            service.versions = try Self.versions(entry["versions"], file: "services.yml", of: spec)
            if let status = try entry.text(at: "status", file: "services.yml", of: spec) {
                guard let parsed = ServiceDescriptor.Status(rawValue: status) else {
                    throw CatalogueError(file: "services.yml", "status '\(status)' of \(spec) is not enabled, experimental or disabled")
                }
                service.status = parsed
            }
            if let codes = entry["countries"] {
                // Every item a code: one dropped could be the only exclusion.
                let items = codes.items ?? []
                let list = items.compactMap(\.text)
                guard codes.items != nil, list.count == items.count, let parsed = CountryAvailability(codes: list) else {
                    throw CatalogueError(file: "services.yml", "countries of \(spec) must list either allowed ([USA]) or excluded ([!CHN]) countries")
                }
                service.countries = parsed
            }
            let definitionFile = folder + "/definition.yml"
            let definition = try Self.read(definitionFile, in: directory, limits: limits, budget: &budget)
            guard case .mapping = definition else { throw CatalogueError(file: definitionFile, "must be a mapping of keys, not \(definition.kind)") }
            if let declared = try definition.text(at: "spec", file: definitionFile), declared != spec {
                throw CatalogueError(file: definitionFile, "'spec' is \(declared), but services.yml lists \(spec) here")
            }
            var endpointFolders = Set<String>()
            for item in try definition.items(at: "endpoints", file: definitionFile) ?? [] {
                guard let name = try item.text(at: "spec", file: definitionFile), let rpcName = try item.text(at: "rpc", file: definitionFile),
                      let endpointFolder = try item.text(at: "folder", file: definitionFile, of: rpcName) else {
                    throw CatalogueError(file: definitionFile, "each endpoint needs 'spec', 'rpc' and 'folder'")
                }
                guard Self.isSafeFolder(endpointFolder) else { throw CatalogueError(file: definitionFile, "folder '\(endpointFolder)' must be a plain relative name") }
                guard endpointFolders.insert(endpointFolder.lowercased()).inserted else { throw CatalogueError(file: definitionFile, "folder '\(endpointFolder)' is given to two endpoints") }
                service.endpoints.append(Endpoint(spec: name, rpcName: rpcName, versions: try Self.versions(item["versions"], file: definitionFile, of: rpcName),
                                                  folder: endpointFolder))
            }
            services.append(service)
        }
        try Self.checkNoFolderInsideAnEndpoint(services)
        self.services = services
    }

    /// Refuses a catalogue where one endpoint's folder holds another's or a service's folder:
    /// the provider takes the folders inside an endpoint's for its consumers' subfolders, so
    /// the other endpoint's requests would be served as the first one's.
    static func checkNoFolderInsideAnEndpoint(_ services: [Service]) throws(CatalogueError) {
        var endpointFolders: [String: String] = [:]
        for service in services {
            for endpoint in service.endpoints {
                // Without case, as the folders' own names are compared.
                let path = (service.folder + "/" + endpoint.folder).lowercased()
                if let other = endpointFolders.updateValue(endpoint.rpcName, forKey: path) {
                    throw CatalogueError(file: "services.yml", "\(endpoint.rpcName) and \(other) have the same folder")
                }
            }
        }
        // A service's own folder may not be an endpoint's either; an endpoint's is checked
        // only above itself.
        let paths = services.map { ($0.folder.lowercased(), $0.spec, false) } + endpointFolders.map { ($0.key, $0.value, true) }
        for (path, owner, isEndpoint) in paths {
            var ancestor = ""
            let components = path.split(separator: "/")
            for component in isEndpoint ? components.dropLast() : components[...] {
                ancestor += (ancestor.isEmpty ? "" : "/") + component
                if let holder = endpointFolders[ancestor] {
                    throw CatalogueError(file: "services.yml", "the folder of \(owner) lies inside the folder of \(holder)")
                }
            }
        }
    }

    /// Creates a catalogue from its parts.
    public init(formatVersion: Int = 1, services: [Service]) {
        self.formatVersion = formatVersion
        self.services = services
    }

    /// Reads one catalogue file: a regular file (a link to one is followed; a device or FIFO
    /// is refused, since it could be endless or block) within the per-file limit and what is
    /// left of the catalogue's `budget`.
    static func read(_ file: String, in directory: URL, limits: CatalogueYAML.Limits, budget: inout Int) throws(CatalogueError) -> CatalogueValue {
        let url = directory.appendingPathComponent(file)
        let data: Data
        switch FileDropFiles.readRegularFile(url, limit: min(limits.maximumBytes, budget), followingLinks: true) {
        case let .read(contents): data = contents
        case .tooLarge:
            throw budget < limits.maximumBytes
                ? CatalogueError(file: file, "would take the catalogue past \(limits.maximumTotalBytes) bytes in all")
                : CatalogueError(file: file, "larger than \(limits.maximumBytes) bytes")
        case .notRegular: throw CatalogueError(file: file, "is not a regular file")
        case let .unreadable(reason): throw CatalogueError(file: file, "cannot be read: \(reason)")
        }
        budget -= data.count
        guard let text = String(data: data, encoding: .utf8) else { throw CatalogueError(file: file, "is not UTF-8") }
        return try CatalogueYAML.parse(text, file: file, limits: limits)
    }

    /// `2` or `1-3`; `nil` when absent. `owner` (a service or rpc) is named in the error.
    static func versions(_ value: CatalogueValue?, file: String, of owner: String? = nil) throws(CatalogueError) -> ClosedRange<Int>? {
        guard let value else { return nil }
        // `[2]` is not read as absent, which would offer every version.
        guard let text = value.text else { throw CatalogueValue.wrongKind("versions", of: owner, file: file, expected: "a number or a range such as 1-3", found: value) }
        // Empty parts kept, so "-3" and "1-" are refused rather than read as 3 and 1; digits
        // only, so no sign slips through.
        let parts = text.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map { part -> Int? in
            let digits = part.trimmingCharacters(in: .whitespaces)
            return !digits.isEmpty && digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) ? Int(digits) : nil
        }
        guard let low = parts.first ?? nil, let high = parts.count > 1 ? parts[1] : low, low <= high, low >= 0 else {
            throw CatalogueError(file: file, "versions '\(text)' must be a number or a range such as 1-3")
        }
        return low...high
    }

    /// A folder name that stays inside the catalogue and has one spelling: relative, no
    /// empty, `.`, `..` or hidden component (`a/`, `a//b` and `a/./b` would name `a` and
    /// `a/b` under another spelling; hidden names are the protocol's own), no NUL.
    static func isSafeFolder(_ name: String) -> Bool {
        !name.contains("\0") && !name.split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty || $0.hasPrefix(".") }
    }
}
