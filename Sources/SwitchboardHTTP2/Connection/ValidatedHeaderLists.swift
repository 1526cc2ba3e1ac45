/// The last header lists a connection found valid, by identity: the decoder hands back the very
/// list it read before when a block comes again (a server's answer and trailers, call after
/// call), and a list already found valid as a response or as trailers needs no second look.
///
/// Holding each list keeps its storage alive, so an identical storage address is the same list
/// and not a new one that happens to sit where a freed one was.
struct ValidatedHeaderLists {
    static let capacity = 2

    private var remembered = OldestReplacedList<(headers: [HPACKHeader], kind: HTTP2HeaderValidation.Kind, summary: HTTP2HeaderValidation.Summary)>(capacity: capacity)
    /// Lists found valid from memory so far (tests check it is used).
    private(set) var hits = 0

    /// Validates `headers` as `kind`, or recalls that this very list passed as `kind` before.
    mutating func validate(_ headers: [HPACKHeader], as kind: HTTP2HeaderValidation.Kind, checked: UInt64) throws(HTTP2ProtocolViolation) -> HTTP2HeaderValidation.Summary {
        let storage = Self.storage(of: headers)
        if storage != nil {
            for index in remembered.elements.indices where remembered.elements[index].kind == kind && Self.storage(of: remembered.elements[index].headers) == storage {
                hits &+= 1
                return remembered.elements[index].summary
            }
        }
        let summary = try HTTP2HeaderValidation.validate(headers, as: kind, checked: checked)
        guard storage != nil else { return summary }
        remembered.insert((headers, kind, summary))
        return summary
    }

    /// Where a non-empty list's elements are stored (empty lists share one storage).
    private static func storage(of headers: [HPACKHeader]) -> UnsafeRawPointer? {
        headers.isEmpty ? nil : headers.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }
}
