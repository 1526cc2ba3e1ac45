import Foundation
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// Schemas the validator accepted but whose generated Swift declared one name twice (found by
/// review): each is now refused with a diagnostic, or generated with a name that is free.
@Suite struct GeneratedNameCollisionTests {
    func compile(_ text: String) -> SchemaCompiler.Output {
        SchemaCompiler.compile(files: [SourceFile(path: "c.sb", text: text)])
    }

    /// A paged rpc `list` puts `listPagination` in the service's namespace, beside the rpcs'
    /// descriptors: an rpc of that name would be declared twice.
    @Test func anRpcNamedLikeAPagedRpcsPaginationIsRefused() {
        let output = compile("""
            package c
            message Item { 1 id: string }
            message Page { 1 cursor: string? }
            message Reply { 1 items: [Item]  2 next: string? }
            service S {
              auth none
              rpc list(Page) -> Reply { GET "/v1/l?cursor={cursor}"  paginate { cursor cursor  items items  next next } }
              rpc listPagination(Page) -> Reply { GET "/v1/m?cursor={cursor}" }
            }
            """)
        #expect(output.schema == nil)
        #expect(output.diagnostics.contains { $0.code == .generatedMemberCollision && $0.message.contains("listPagination") }, "\(output.renderedDiagnostics)")
    }

    /// Request fields named `options` and `callOptions`: the call options take a label no
    /// field, oneof or key has.
    @Test func theCallOptionsLabelIsOneNoFieldTakes() throws {
        let output = compile("""
            package c
            message Req { 1 options: string  2 callOptions: string }
            message Res { 1 ok: bool }
            service S {
              auth none
              rpc send(Req) -> Res { POST "/v1/s" }
            }
            """)
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        let files = SwiftEmitter.generate(schema, options: SwiftEmitterOptions())
        let text = try #require(files.first { $0.path == "SService.swift" }?.contents, "\(files.map(\.path))")
        // The throwing form's parameters, one per line.
        let start = try #require(text.range(of: "public func send(\n"))
        let end = try #require(text.range(of: ") async throws", range: start.upperBound..<text.endIndex))
        let parameters = text[start.upperBound..<end.lowerBound].split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        #expect(parameters == ["options: String = \"\",", "callOptions: String = \"\",", "switchboardCallOptions: CallOptions = CallOptions()"], "\(parameters)")
        #expect(text.contains("self.send(request, options: switchboardCallOptions)"))
    }

    /// A key with the name of one of the request's oneofs: the generated call would take both
    /// under one label.
    @Test func aKeyNamedLikeARequestOneofIsRefused() {
        let output = compile("""
            package c
            key feedToken: header "Feed-Token" base64
            message Req { oneof feedToken { 1 text: string  2 number: int32 } }
            message Res { 1 ok: bool }
            service S {
              auth none
              rpc post(Req) -> Res { POST "/p"  keys feedToken }
            }
            """)
        #expect(output.schema == nil)
        #expect(output.renderedDiagnostics.contains("key 'feedToken' has the name of a field or oneof of the request Req"), "\(output.renderedDiagnostics)")
    }
}
