/// The outcome of a typed call, after libsignal's `RequestResult`: the typed value,
/// the endpoint's own error, or a transport failure shared by every endpoint.
public enum RequestResult<Success: Sendable, EndpointError: Error & Sendable>: Sendable {
    /// The call succeeded.
    case success(Success)
    /// The server answered with an error this endpoint declares.
    case nonSuccess(EndpointError)
    /// No usable answer arrived.
    case failure(TransportError)

    /// The value, or the error as a `RequestError`.
    public func get() throws(RequestError<EndpointError>) -> Success {
        switch self {
        case let .success(value): return value
        case let .nonSuccess(error): throw .endpoint(error)
        case let .failure(error): throw .transport(error)
        }
    }

    /// The value, or `nil`.
    public var value: Success? {
        if case let .success(value) = self { return value }
        return nil
    }

    /// Whether the call succeeded.
    public var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    /// The endpoint's own error, or `nil`.
    public var endpointError: EndpointError? {
        if case let .nonSuccess(error) = self { return error }
        return nil
    }

    /// The transport failure, or `nil`.
    public var transportError: TransportError? {
        if case let .failure(error) = self { return error }
        return nil
    }

    /// Transforms the success value.
    public func map<NewSuccess: Sendable>(_ transform: (Success) throws(TransportError) -> NewSuccess) -> RequestResult<NewSuccess, EndpointError> {
        switch self {
        case let .success(value):
            do throws(TransportError) {
                return .success(try transform(value))
            } catch {
                return .failure(error)
            }
        case let .nonSuccess(error): return .nonSuccess(error)
        case let .failure(error): return .failure(error)
        }
    }
}

extension RequestResult: Equatable where Success: Equatable, EndpointError: Equatable {}

/// The error a throwing call raises: the endpoint's own error or a transport failure.
public enum RequestError<EndpointError: Error & Sendable>: Error, Sendable {
    /// The server answered with an error this endpoint declares.
    case endpoint(EndpointError)
    /// No usable answer arrived.
    case transport(TransportError)
}

extension RequestError: Equatable where EndpointError: Equatable {}
