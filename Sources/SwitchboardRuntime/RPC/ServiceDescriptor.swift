/// A service's entry in the catalogue: its name, who may call it, and its availability.
public struct ServiceDescriptor: Sendable, Hashable {
    /// Availability, in the spirit of SimpleX's service catalogue.
    public enum Status: String, Sendable, Hashable {
        case enabled, experimental, disabled
    }

    /// `package.Service`
    public let name: String
    public let auth: AuthRequirement
    /// The protocol versions the service supports, when the schema states them.
    public let versions: ClosedRange<Int>?
    public let status: Status
    public let endpoints: [EndpointDescriptor]
    public let events: [EventDescriptor]

    /// Creates a descriptor.
    public init(name: String, auth: AuthRequirement, versions: ClosedRange<Int>?, status: Status, endpoints: [EndpointDescriptor], events: [EventDescriptor]) {
        self.name = name
        self.auth = auth
        self.versions = versions
        self.status = status
        self.endpoints = endpoints
        self.events = events
    }
}
