import Foundation
import SwitchboardSchema
import Testing

/// Each `Diagnostics/<case>.sb` (or `<case>/` folder of files) must produce exactly the
/// diagnostics in `<case>.expected`. Run with SWITCHBOARD_UPDATE_GOLDENS=1 to rewrite them.
@Suite struct DiagnosticGoldenTests {
    static var resources: URL { Bundle.module.url(forResource: "Diagnostics", withExtension: nil)! }
    static var sourceDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Diagnostics")
    }

    static var cases: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: resources.path)) ?? []
        return names.compactMap { name in
            if name.hasSuffix(".sb") { return String(name.dropLast(3)) }
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: resources.appendingPathComponent(name).path, isDirectory: &isDirectory)
            return exists && isDirectory.boolValue ? name : nil
        }.sorted()
    }

    static func compile(_ name: String) -> SchemaCompiler.Output {
        let single = resources.appendingPathComponent("\(name).sb")
        if let text = try? String(contentsOf: single, encoding: .utf8) {
            return SchemaCompiler.compile(files: [SourceFile(path: "\(name).sb", text: text)])
        }
        let folder = resources.appendingPathComponent(name)
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted().map { file in
            SourceFile(path: "\(name)/\(file)", text: (try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)) ?? "")
        }
        return SchemaCompiler.compile(files: files)
    }

    @Test(arguments: cases)
    func diagnosticsMatchGolden(name: String) throws {
        let output = Self.compile(name)
        let rendered = output.renderedDiagnostics
        if ProcessInfo.processInfo.environment["SWITCHBOARD_UPDATE_GOLDENS"] == "1" {
            try rendered.write(to: Self.sourceDirectory.appendingPathComponent("\(name).expected"), atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: Self.resources.appendingPathComponent("\(name).expected"), encoding: .utf8)
        #expect(rendered == expected, "\(name):\n\(rendered)")
        #expect(!output.diagnostics.isEmpty, "\(name) produced no diagnostics")
    }

    /// The golden files cover at least 25 distinct kinds of error (warnings not counted).
    @Test func goldensCoverManyErrorKinds() {
        var kinds = Set<DiagnosticCode>()
        for name in Self.cases {
            for diagnostic in Self.compile(name).diagnostics where diagnostic.severity == .error {
                kinds.insert(diagnostic.code)
            }
        }
        #expect(kinds.count >= 25, "only \(kinds.count) kinds: \(kinds.map(\.rawValue).sorted())")
    }

    /// Cases named after a situation rather than a kind, and the kind each must report.
    static let situations: [String: DiagnosticCode] = [
        "allow_alias_without_aliases": .misplacedAttribute, "invalid_catalogue_metadata": .invalidServiceSetting,
        "json_name_attribute": .jsonNameCollision, "many_errors": .unknownType, "misplaced_unpacked": .misplacedAttribute,
        "reserved_generated_names": .generatedNameCollision, "proto3_name_folding": .jsonNameCollision,
        "rpc_error_type_hides_type": .generatedNameCollision, "unclosed_message": .expectedToken, "unclosed_service_blocks": .expectedToken,
    ]

    /// Each case is named after the kind it demonstrates (or is listed in ``situations``), and
    /// produces that kind: a case renamed or a kind renamed fails here instead of going unchecked.
    @Test(arguments: cases)
    func caseProducesItsNamesake(name: String) {
        guard let code = DiagnosticCode(rawValue: name.replacingOccurrences(of: "_", with: "-")) ?? Self.situations[name] else {
            Issue.record("\(name) names no diagnostic kind and is not listed in situations")
            return
        }
        #expect(Self.compile(name).diagnostics.contains { $0.code == code }, "\(name) does not report \(code.rawValue)")
    }

    @Test func oneRunReportsManyErrors() {
        let errors = Self.compile("many_errors").diagnostics.filter { $0.severity == .error }
        #expect(errors.count >= 6)
        #expect(Self.compile("many_errors").schema == nil)
    }

    @Test func emptyInputIsAnError() {
        let output = SchemaCompiler.compile(files: [])
        #expect(output.schema == nil)
        #expect(output.diagnostics.map(\.code) == [.noSchemaFiles])
        #expect(output.renderedDiagnostics == "switchboard: error: no schema files (*.sb) were found [no-schema-files]\n")
    }
}
