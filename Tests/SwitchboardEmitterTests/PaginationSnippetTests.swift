import Foundation
import SwitchboardEmitter
import SwitchboardSchema
import Testing

/// A paged rpc in, exact Swift out: what follows a page, with and without a `more` flag.
@Suite struct PaginationSnippetTests {
    static let schema = """
        package demo
        message Item { 1 id: string }
        message ListRequest { 1 after: string?  2 limit: uint32 }
        message ListResponse { 1 items: [Item]  2 next: string?  3 more: bool }
        service Items {
          auth none
          rpc list(ListRequest) -> ListResponse {
            GET "/v1/items?after={after}&limit={limit}"
            paginate { cursor after  limit limit  items items  next next }
          }
          rpc listPromised(ListRequest) -> ListResponse {
            GET "/v1/items/promised?after={after}&limit={limit}"
            paginate { cursor after  limit limit  items items  next next  more more }
          }
          rpc listNewest(ListRequest) -> ListResponse {
            GET "/v1/items/newest?after={after}&limit={limit}"
            paginate { cursor after  limit limit  items items  next last.id  more more }
          }
        }
        """

    func itemsFile() throws -> String {
        let output = SchemaCompiler.compile(files: [SourceFile(path: "snippet.sb", text: Self.schema)])
        let schema = try #require(output.schema, "\(output.renderedDiagnostics)")
        let files = SwiftEmitter.generate(schema, options: SwiftEmitterOptions())
        return try #require(files.first { $0.path == "ItemsService.swift" }?.contents)
    }

    /// The documentation names what the runtime throws without any call failing (from the
    /// pagination review: a repeated cursor and the empty-page bound went unmentioned).
    @Test func theSequencesDocumentTheRuntimesOwnErrors() throws {
        let file = try itemsFile()
        #expect(file.contains("""
                /// (none for the first page); it ends after the last page, and throws the error of the first call that fails,
                /// `TransportError.unexpectedResponse` when the server hands out a cursor it gave before,
                /// and `TransportError.cancelled` once the iterating task is cancelled.
            """))
        #expect(file.contains("""
                /// `TransportError.unexpectedResponse` when the server hands out a cursor it gave before or a page promises more without a next cursor,
            """))
        #expect(file.contains("""
                /// Every item of every page of `list`, in order; pages are fetched as the items run out.
                /// Throws what the pages throw, and `TransportError.unexpectedResponse` after 100 empty pages in a row
                /// (`listPages(...).items(maximumConsecutiveEmptyPages:)` sets another bound).
            """))
    }

    @Test func withoutAMoreFlagAMissingCursorIsTheLastPage() throws {
        #expect(try itemsFile().contains("""
                        continuation: { request, response in
                            guard let cursor = response.next, !StringCodec.isDefault(cursor) else { return .last }
                            var next = request
                            next.after = cursor
                            return .next(next)
                        }
            """))
    }

    @Test func afterAMoreFlagAMissingResponseCursorIsInconsistent() throws {
        #expect(try itemsFile().contains("""
                        continuation: { request, response in
                            guard response.more else { return .last }
                            guard let cursor = response.next, !StringCodec.isDefault(cursor) else { return .inconsistent("`more` says more pages follow, but the response gives no `next`") }
                            var next = request
                            next.after = cursor
                            return .next(next)
                        }
            """))
    }

    @Test func afterAMoreFlagAMissingItemCursorIsInconsistent() throws {
        #expect(try itemsFile().contains("""
                        continuation: { request, response in
                            guard response.more else { return .last }
                            guard let item = response.items.last else { return .inconsistent("`more` says more pages follow, but the page has no items to take the next cursor from") }
                            let cursor = item.id
                            guard !StringCodec.isDefault(cursor) else { return .inconsistent("`more` says more pages follow, but the page's last item gives no `id`") }
                            var next = request
                            next.after = cursor
                            return .next(next)
                        }
            """))
    }
}
