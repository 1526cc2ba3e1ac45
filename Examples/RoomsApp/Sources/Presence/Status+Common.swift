// Hand-written beside the committed generated code, which lives in Generated/.

extension Status {
    /// The status of an account that says nothing more than that it is there.
    public static let available = Status(availability: .available)
}
