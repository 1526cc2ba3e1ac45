import Foundation
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// The published catalogue's documents, made from the schema once each.
@Suite struct CatalogueExporterTests {
    /// Many rpcs sharing a request whose definition is large (fields of an enum of many cases,
    /// each listed in full): its document is made once and shared, not rebuilt per rpc (found
    /// by review: the export took time and memory as rpcs × document).
    @Test func aSharedMessagesDocumentIsMadeOnce() throws {
        let cases = (0..<200).map { "C\($0) = \($0)" }.joined(separator: " ")
        var text = "package demo\nenum Big { \(cases) }\nmessage Request {\n"
        for index in 0..<1000 { text += "  \(index + 1) f\(index): Big\n" }
        text += "}\nmessage Ok {}\nservice Things {\n  auth none\n"
        for rpc in 0..<50 { text += "  rpc send\(rpc)(Request) -> Ok { POST \"/v1/send\(rpc)\" }\n" }
        text += "}\n"
        let output = SchemaCompiler.compile(files: [SourceFile(path: "c.sb", text: text)])
        let schema = try #require(output.schema, "\(output.renderedDiagnostics.prefix(500))")
        let start = ContinuousClock.now
        let files = CatalogueExporter.export(schema)
        #expect(ContinuousClock.now - start < .seconds(10), "50 rpcs sharing a document of 200,000 enum names")
        let requests = files.filter { $0.path.hasSuffix(".request.jtd.json") }
        #expect(requests.count == 50)
        let first = try #require(requests.first).contents
        #expect(first.contains("\"ref\": \"demo.Request\""))
        #expect(requests.allSatisfy { $0.contents == first })
    }
}
