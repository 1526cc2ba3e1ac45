@testable import SwitchboardCatalogue
import Testing

/// A service's `versions`: a number or a range, nothing else (from the input review, "-3" read
/// as 3 and "1-" as 1).
@Suite struct CatalogueVersionRangeTests {
    @Test func numbersAndRangesReadAndAnythingElseIsRefused() throws {
        #expect(try ServiceCatalogue.versions(.scalar("2"), file: "c.yml") == 2...2)
        #expect(try ServiceCatalogue.versions(.scalar("1-3"), file: "c.yml") == 1...3)
        #expect(try ServiceCatalogue.versions(.scalar(" 1 - 3 "), file: "c.yml") == 1...3)
        #expect(try ServiceCatalogue.versions(nil, file: "c.yml") == nil)
        for bad in ["-3", "1-", "-", "", "+2", "1-+3", "3-1", "1-2-3", "x", "1.5"] {
            #expect(throws: CatalogueError.self, "\(bad)") { try ServiceCatalogue.versions(.scalar(bad), file: "c.yml") }
        }
    }
}
