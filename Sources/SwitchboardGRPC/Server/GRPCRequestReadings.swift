import SwitchboardHTTP2
import SwitchboardHTTPSyntax

/// A connection's last request header lists with what each was read as, so a list that
/// arrives again as the same array (the HPACK decoder hands over a remembered block's own
/// array) is not read again: about 1,000 instructions and a dozen retains a call. Used on
/// the connection's loop only.
///
/// Bounded: ``capacity`` lists of at most ``fieldLimit`` fields and ``sizeLimit`` bytes
/// (counted as HPACK counts a list), only lists the decoder could hand back again; a list is
/// known by its storage, never by its contents, so a list built apart is always read.
final class GRPCRequestReadings {
    static let capacity = 4
    /// The most fields the HPACK decoder remembers of a block.
    static var fieldLimit: Int { HPACKDecoder.rememberedFieldLimit }
    /// A dynamic table's worth at the default size: what one remembered block can decode to.
    static let sizeLimit = 4096

    private var entries = OldestReplacedList<(headers: [HPACKHeader], reading: GRPCRequestReading)>(capacity: capacity)
    /// Readings served from memory so far (for tests).
    private(set) var reused = 0

    /// What `headers` say, read now or remembered from the same array.
    func reading(of headers: [HPACKHeader], methods: GRPCMethodCache) -> GRPCRequestReading {
        // By index: iterating copied each entry (two retains) to compare an address. An
        // empty list never matches (every empty array shares one storage).
        for index in entries.elements.indices where HTTPSyntax.sameStorage(entries.elements[index].headers, headers) {
            reused &+= 1
            return entries.elements[index].reading
        }
        let reading = GRPCRequestReading(headers: headers, methods: methods)
        guard !headers.isEmpty, headers.count <= Self.fieldLimit, reading.headerListSize <= Self.sizeLimit else { return reading }
        // The entry keeps its array alive, so its address cannot be reused by another list.
        entries.insert((headers, reading))
        return reading
    }
}
