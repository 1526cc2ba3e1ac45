import Foundation
@testable import SwitchboardCatalogue
import SwitchboardRuntime
import Testing

/// Unclaimable requests in consumer folders served in turn (more folders than
/// ``FileDropOptions/maximumConsumerFolders``).
@Suite(.timeLimit(.minutes(3))) struct FileDropUnclaimableRotationTests {
    static let id = "20260101T000000000Z_LookUpUsernameHash_00000007"

    /// Drops request `id` into `folder` with its claimed name taken already: it cannot be claimed.
    static func plantUnclaimable(in folder: URL) throws {
        try Data("{}".utf8).write(to: folder.appendingPathComponent(Self.id + ".claimed.json"))
        try FileDropHardeningTests.requestDocument(id: Self.id).write(to: folder.appendingPathComponent(Self.id + ".request.json"))
    }

    /// A scan forgot every unclaimable request outside its window of consumer folders: each
    /// time the window came back to the folder its request was tried and said again. Now a
    /// folder's are forgotten only as a scan lists it (a file gone) or finds it gone.
    @Test func anUnclaimableRequestIsSaidOnceAcrossTurnsAndForgottenOnceGone() async throws {
        var setup = try FileDropTests.Setup()
        defer { setup.exported.remove() }
        setup.options.maximumConsumerFolders = 2
        // Each scan lists the endpoint's folder again, so the window moves at each.
        setup.options.fullScanInterval = .zero
        let (provider, reports, base) = try FileDropHardeningTests.reportingProvider(setup)
        for name in ["a0", "a1", "b0", "b1", "b2", "b3", "c", "d"] {
            try FileManager.default.createDirectory(at: base.appendingPathComponent(name), withIntermediateDirectories: false)
        }
        // a0 and a1 sort first and keep requests too: they take the places of the folders
        // kept past the window for their requests, so c and d are reached only in turn.
        for name in ["a0", "a1", "c", "d"] { try Self.plantUnclaimable(in: base.appendingPathComponent(name)) }
        let c = base.appendingPathComponent("c"), d = base.appendingPathComponent("d")
        func said(_ folder: URL) -> [FileDropDiagnostic] { reports.current.filter { $0.path.hasPrefix(folder.path + "/") } }
        /// Whether the last scan listed `folder` (the listings kept are those of the folders it listed).
        func scanned(_ folder: URL) -> Bool { provider.listings.current.keys.contains(folder.path) }
        func unclaimable(_ folder: URL) -> Bool { provider.unclaimable.current[folder.path]?.contains(Self.id) == true }

        var returns: [String: Int] = [:], inScan: [String: Bool] = [:]
        for _ in 0..<24 {
            #expect(await provider.servePending() == 0)
            for folder in [c, d] {
                let now = scanned(folder)
                if now, !inScan[folder.path, default: false] { returns[folder.path, default: 0] += 1 }
                inScan[folder.path] = now
            }
        }
        // The window went away from each and came back, several times.
        #expect(returns[c.path, default: 0] >= 3, "\(returns)")
        #expect(returns[d.path, default: 0] >= 3, "\(returns)")
        for folder in [c, d] {
            #expect(said(folder).count == 1, "\(folder.lastPathComponent): \(said(folder))")
            #expect(said(folder).first?.problem.contains("cannot be claimed") == true, "\(said(folder))")
            #expect(unclaimable(folder))
        }
        #expect(said(base.appendingPathComponent("a0")).count == 1)
        #expect(said(base.appendingPathComponent("a1")).count == 1)
        #expect(setup.handlers.served.current.isEmpty)

        // Outside the window c keeps its entry; once the folder is gone the next scan drops it.
        var outside = false
        for _ in 0..<6 where !outside {
            _ = await provider.servePending()
            outside = !scanned(c)
        }
        try #require(outside, "the window leaves c")
        #expect(unclaimable(c), "kept while the window is elsewhere")
        try FileManager.default.removeItem(at: c)
        _ = await provider.servePending()
        #expect(provider.unclaimable.current[c.path] == nil, "\(provider.unclaimable.current)")

        // d's file is removed while the window is elsewhere: forgotten once d is listed again.
        outside = false
        for _ in 0..<6 where !outside {
            _ = await provider.servePending()
            outside = !scanned(d)
        }
        try #require(outside, "the window leaves d")
        #expect(unclaimable(d), "kept while the window is elsewhere")
        try FileManager.default.removeItem(at: d.appendingPathComponent(Self.id + ".request.json"))
        var back = false
        for _ in 0..<8 where !back {
            _ = await provider.servePending()
            back = scanned(d)
        }
        try #require(back, "the window comes back to d")
        #expect(provider.unclaimable.current[d.path] == nil, "\(provider.unclaimable.current)")
        // No more is kept than what is on disk: the two requests that stay.
        #expect(Set(provider.unclaimable.current.keys) == [base.appendingPathComponent("a0").path, base.appendingPathComponent("a1").path])
        #expect(said(d).count == 1, "\(said(d))")
    }
}
