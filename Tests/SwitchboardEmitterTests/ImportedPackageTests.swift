import Foundation
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// A schema that imports another schema's package: linking, Swift references and export.
@Suite struct ImportedPackageTests {
    static let common = SchemaCompiler.compile(files: [SourceFile(path: "common/common.sb", text: """
        package acme.common
        import google.protobuf
        message Address { 1 street: string  2 verifiedAt: timestamp  3 ttl: google.protobuf.Duration }
        enum Kind { KIND_UNSPECIFIED = 0  HOME = 1 }
        """)])

    func compileApp(module: String? = "AcmeCommon") throws -> Schema {
        let common = try #require(Self.common.schema, "\(Self.common.renderedDiagnostics)")
        let output = SchemaCompiler.compile(files: [SourceFile(path: "app/app.sb", text: """
            package acme.app
            import acme.common
            message Profile { 1 home: acme.common.Address  2 since: timestamp  3 kinds: [acme.common.Kind] }
            message Address { 1 line: string }
            """)], imports: [ImportableSchema(schema: common, swiftModule: module)])
        return try #require(output.schema, "\(output.renderedDiagnostics)")
    }

    @Test func aPackageAndWhatItImportsAreLinkedOnce() throws {
        let app = try compileApp()
        #expect(app.importedPackages.map(\.name) == ["google.protobuf", "acme.common"])
        #expect(app.importedPackages.map(\.swiftModule) == ["SwitchboardRuntime", "AcmeCommon"])
        // The Timestamp the app uses and the one Address uses are one definition.
        #expect(app.messages.filter { $0.fullName == "google.protobuf.Timestamp" }.count == 1)
        let address = try #require(app.messages.firstIndex { $0.fullName == "acme.common.Address" })
        guard case let .singular(.message(timestamp)) = app.messages[address].fields[1].shape else {
            Issue.record("verifiedAt is not a message")
            return
        }
        #expect(app.messages[timestamp].fullName == "google.protobuf.Timestamp")
        #expect(app.topLevelMessages.map(\.name) == ["Profile", "Address"])
    }

    @Test func importedTypesAreQualifiedByTheirModuleAndTheModuleImported() throws {
        let files = SwiftEmitter.generate(try compileApp(), options: SwiftEmitterOptions())
        #expect(files.map(\.path) == ["Address.swift", "Profile.swift"], "imported types are not declared again")
        let profile = try #require(files.first { $0.path == "Profile.swift" }).contents
        #expect(profile.contains("import AcmeCommon\n"))
        // The app's own Address would hide the imported one without the module.
        #expect(profile.contains("public var home: AcmeCommon.Address {"))
        #expect(profile.contains("private var _home: AcmeCommon.Address? = nil"))
        #expect(profile.contains("public var kinds: [AcmeCommon.Kind] = []"))
        #expect(profile.contains("private var _since: ProtoTimestamp? = nil"))
    }

    @Test func aPackageGeneratedIntoTheSameModuleIsNotQualified() throws {
        let files = SwiftEmitter.generate(try compileApp(module: nil), options: SwiftEmitterOptions())
        let profile = try #require(files.first { $0.path == "Profile.swift" }).contents
        #expect(!profile.contains("import AcmeCommon"))
        #expect(profile.contains("public var kinds: [Kind] = []"))
    }

    @Test func theExportImportsThePackagesFile() throws {
        let text = ProtoExporter.export(try compileApp())
        #expect(text.contains("import \"acme/common.proto\";\nimport \"google/protobuf/timestamp.proto\";"))
        #expect(text.contains("  .acme.common.Address home = 1;"))
        #expect(!text.contains("message Kind") && !text.contains("enum Kind"))
    }

    @Test func rpcsTakingImportedMessagesImportTheirFile() throws {
        let common = try #require(Self.common.schema)
        let output = SchemaCompiler.compile(files: [SourceFile(path: "app/app.sb", text: """
            package acme.app
            import acme.common
            import google.protobuf
            service Addresses {
              auth none
              rpc verify(acme.common.Address) -> google.protobuf.Empty { POST "/v1/verify" }
            }
            """)], imports: [ImportableSchema(schema: common, swiftModule: "AcmeCommon")])
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        let text = ProtoExporter.export(schema)
        #expect(text.contains("import \"acme/common.proto\";"), "\(text)")
        #expect(text.contains("rpc Verify(.acme.common.Address) returns (.google.protobuf.Empty);"), "\(text)")
    }

    /// A type of the importing schema named like the module an imported package is
    /// generated into would hide that module from every qualified reference (found by
    /// review): refused, for a message, an enum, a service and a service's generated types.
    @Test(arguments: [
        "message AcmeCommon { 1 a: acme.common.Address }",
        "enum AcmeCommon { NONE = 0 }",
        "message Uses { 1 a: acme.common.Address }\nservice AcmeCommon { auth none  rpc get(Uses) -> Uses { GET \"/v1/g\" } }",
        "message Uses { 1 a: acme.common.Address }\nservice Acme { auth none  rpc get(Uses) -> Uses { GET \"/v1/g\" } }",
        "key acmeCommon: header \"X-Acme\" string",
    ]) func aTypeNamedLikeAnImportedModuleIsRefused(declaration: String) throws {
        let common = try #require(Self.common.schema)
        let module = declaration.contains("service Acme {") ? "AcmeClient" : "AcmeCommon"
        let output = SchemaCompiler.compile(files: [SourceFile(path: "app/app.sb", text: """
            package acme.app
            import acme.common
            message Holder { 1 a: acme.common.Address }
            \(declaration)
            """)], imports: [ImportableSchema(schema: common, swiftModule: module)])
        #expect(output.schema == nil)
        #expect(output.renderedDiagnostics.contains("has the name of the Swift module '\(module)'"), "\(output.renderedDiagnostics)")
        // Generated into this module instead, the same names are fine.
        let same = SchemaCompiler.compile(files: [SourceFile(path: "app/app.sb", text: """
            package acme.app
            import acme.common
            message Holder { 1 a: acme.common.Address }
            \(declaration)
            """)], imports: [ImportableSchema(schema: common, swiftModule: nil)])
        #expect(!same.renderedDiagnostics.contains("has the name of the Swift module"), "\(same.renderedDiagnostics)")
    }
}
