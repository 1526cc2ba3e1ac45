/// A service's entry in the catalogue: its name, who may call it, and its availability.
public struct ServiceDescriptor: Sendable, Hashable {
    /// Availability, in the spirit of SimpleX's service catalogue.
    public enum Status: String, Sendable, Hashable {
        /// Available; the default when the schema states no status.
        case enabled
        /// Available, but still subject to change.
        case experimental
        /// Listed in the catalogue but not to be used.
        case disabled
    }

    /// `package.Service`
    public let name: String
    /// Which connection the service may be called through.
    public let auth: AuthRequirement
    /// The protocol versions the service supports, when the schema states them.
    public let versions: ClosedRange<Int>?
    /// The service's availability, from `status` in the schema.
    public let status: Status
    /// The service's endpoints, in schema order.
    public let endpoints: [EndpointDescriptor]
    /// The pushes the server sends for this service.
    public let events: [EventDescriptor]
    /// Where the service is offered, from `countries` in the schema; `nil`: everywhere.
    public let countries: CountryAvailability?

    /// Creates a descriptor.
    public init(name: String, auth: AuthRequirement, versions: ClosedRange<Int>?, status: Status, endpoints: [EndpointDescriptor], events: [EventDescriptor],
                countries: CountryAvailability? = nil) {
        self.countries = countries
        self.name = name
        self.auth = auth
        self.versions = versions
        self.status = status
        self.endpoints = endpoints
        self.events = events
    }
}
