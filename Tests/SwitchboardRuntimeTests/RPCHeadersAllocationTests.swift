import AllocationCounter
import SwitchboardRuntime
import Testing

/// Every call builds headers from literals (`CallOptions`' default among them): an empty one
/// must cost no allocation, and a small one a single buffer that the usual additions fit.
@Suite(.enabled(if: sb_allocation_counting_available() != 0, "allocations are counted with glibc, without sanitizers"))
struct RPCHeadersAllocationTests {
    @Test func anEmptyLiteralAllocatesNothing() {
        // The first use instantiates type metadata, once per process.
        let warmUp: RPCHeaders = [:]
        withExtendedLifetime(warmUp) {}
        sb_allocation_counting_begin()
        let headers: RPCHeaders = [:]
        let allocated = sb_allocation_counting_end()
        #expect(allocated == 0)
        #expect(headers.fields.isEmpty)
    }

    @Test func aSmallLiteralHasRoomForTheHeadersCallsAdd() {
        var headers: RPCHeaders = ["Accept": "application/x-protobuf"]
        sb_allocation_counting_begin()
        headers.add("Content-Type", "application/x-protobuf")
        headers.add("Authorization", "Basic x")
        headers.add("X-Extra", "1")
        let allocated = sb_allocation_counting_end()
        #expect(allocated == 0)
        #expect(headers.fields.count == 4)
    }
}
