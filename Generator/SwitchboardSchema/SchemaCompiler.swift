import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The front end's entry point: schema text in, a validated ``Schema`` and diagnostics out.
public enum SchemaCompiler {
    /// The extension of schema files.
    public static let fileExtension = "sb"
    /// The default largest schema file read: 16 MiB (``SchemaLimits/maximumFileSize``). A larger one is an error, not read.
    public static let maximumFileSize = 16 << 20

    /// The result of compiling a schema.
    public struct Output: Sendable {
        /// The validated schema, or `nil` if any error was found.
        public var schema: Schema?
        /// Every diagnostic, sorted by position.
        public var diagnostics: [Diagnostic]
        /// The files read, for rendering diagnostics.
        public var files: [SourceFile]

        /// Diagnostics rendered as a compiler would print them.
        public var renderedDiagnostics: String { DiagnosticRenderer(files: files).render(diagnostics) }

        /// Diagnostics with paths that open from where the command runs: a file's path
        /// starts with the schema directory as the user named it (`../api/chat.sb`), not
        /// with the directory's last component, which headers of generated code use.
        public func renderedDiagnostics(directoryAsGiven directory: String) -> String {
            var base = directory
            while base.count > 1 && base.hasSuffix("/") { base.removeLast() }
            let shown = files.map { file -> SourceFile in
                guard let slash = file.path.firstIndex(of: "/") else { return file }
                let relative = file.path[file.path.index(after: slash)...]
                return SourceFile(path: base == "." ? String(relative) : base + "/" + relative, text: file.text)
            }
            // Messages name other places too ("already declared at api/a.sb:2:9"): those move
            // with their files, matched whole (after a space or parenthesis, before ":line:").
            let moves = zip(files, shown).filter { $0.path != $1.path }.map { ($0.path, $1.path) }
            let remapped = diagnostics.map { diagnostic -> Diagnostic in
                var message = diagnostic.message
                for (old, new) in moves where message.contains(old) {
                    message = Self.replacingLocations(of: old, with: new, in: message)
                }
                return Diagnostic(diagnostic.severity, diagnostic.code, message, at: diagnostic.location)
            }
            return DiagnosticRenderer(files: shown).render(remapped)
        }

        /// `text` with each `old:line:column` that starts a word written `new:line:column`.
        static func replacingLocations(of old: String, with new: String, in text: String) -> String {
            var result = ""
            var rest = text[...]
            while let range = rest.range(of: old + ":") {
                let startsWord = range.lowerBound == rest.startIndex
                    ? (result.last.map { $0 == " " || $0 == "(" } ?? true)
                    : [" ", "("].contains(rest[rest.index(before: range.lowerBound)])
                let followedByLine = rest[range.upperBound...].first?.isNumber == true
                result += rest[..<range.lowerBound]
                result += startsWord && followedByLine ? new + ":" : old + ":"
                rest = rest[range.upperBound...]
            }
            return result + rest
        }
    }

    /// Compiles in-memory files. Files are sorted by path first, so the result does not
    /// depend on the order they are given in.
    public static func compile(files unsorted: [SourceFile], imports: [ImportableSchema] = [], limits: SchemaLimits = SchemaLimits()) -> Output {
        // On a thread whose stack holds the deepest nesting the limits allow, whatever the caller's.
        DeepStack.run { compileOnThisThread(files: unsorted, imports: imports, limits: limits) }
    }

    private static func compileOnThisThread(files unsorted: [SourceFile], imports: [ImportableSchema], limits: SchemaLimits) -> Output {
        let files = unsorted.sorted { $0.path < $1.path }
        var diagnostics = DiagnosticCollector()
        guard !files.isEmpty else {
            diagnostics.error(.noSchemaFiles, "no schema files (*.\(fileExtension)) were found", at: nil)
            return Output(schema: nil, diagnostics: diagnostics.diagnostics, files: files)
        }
        // Files parse on every core; their syntax and diagnostics are kept in file order.
        let parsed = Array(files.enumerated()).concurrentMap { Parser.parse($0.element, fileIndex: $0.offset, limits: limits) }
        var syntax: [FileSyntax] = []
        for (fileSyntax, parseDiagnostics) in parsed {
            syntax.append(fileSyntax)
            diagnostics.append(contentsOf: parseDiagnostics)
        }
        var validator = SchemaValidator(files: files, syntax: syntax, imports: imports, limits: limits)
        let schema = validator.validate()
        diagnostics.append(contentsOf: validator.diagnostics.diagnostics)
        return Output(schema: diagnostics.hasErrors ? nil : schema, diagnostics: diagnostics.sorted, files: files)
    }

    /// A schema directory another schema may import, and the Swift module its types are
    /// generated into (`nil`: the same module as the importing schema's). A module name must
    /// be a Swift identifier that is not a keyword (``SwiftNames/isModuleName(_:)``).
    public struct ImportPath: Sendable, Hashable {
        public var directory: URL
        public var swiftModule: String?

        /// Describes an import path.
        public init(directory: URL, swiftModule: String? = nil) {
            self.directory = directory
            self.swiftModule = swiftModule
        }
    }

    /// Compiles `directory`, whose files may `import` the packages of `importPaths`.
    ///
    /// Each import path is compiled once, after the paths it imports in turn; a cycle, two paths
    /// with one package, an import path with errors or with a file it cannot read, or a module
    /// name that is not a Swift identifier is an error of this compile.
    public static func compile(directory: URL, importPaths: [ImportPath], limits: SchemaLimits = SchemaLimits()) -> Output {
        var diagnostics = DiagnosticCollector()
        // Packages already reported (a cycle, errors): each is reported once, not again from
        // every package that imports it.
        var failed: Set<String> = []
        // First the package each path declares and the packages it imports, from syntax alone.
        var paths: [String: (path: ImportPath, files: [SourceFile], imports: Set<String>)] = [:]
        for path in importPaths {
            // A file left unread fails its path, as it fails the main directory: the package
            // would be linked without the types that file declares.
            let (files, unreadable) = readFiles(in: path.directory, limits: limits)
            diagnostics.append(contentsOf: unreadable.diagnostics)
            var usable = !unreadable.hasErrors
            // Generated code writes `import <module>` and `<module>.<Type>`.
            if let module = path.swiftModule, !SwiftNames.isModuleName(module) {
                diagnostics.error(.invalidImport, "import path \(path.directory.relativePath) names the Swift module '\(module)'; a module name is an ASCII identifier (letters, digits, '_', not starting with a digit) that is not a Swift keyword", at: nil)
                usable = false
            }
            let syntax = files.enumerated().map { Parser.parse($1, fileIndex: $0, limits: limits).0 }
            guard let package = syntax.lazy.compactMap(\.packages.first).first?.name else {
                if !unreadable.hasErrors {
                    diagnostics.error(.invalidImport, "import path \(path.directory.relativePath) holds no schema with a 'package'", at: nil)
                }
                continue
            }
            if package == WellKnownTypes.packageName {
                diagnostics.error(.invalidImport, "import path \(path.directory.relativePath) declares package '\(package)', which is built in (the well-known types) and cannot be replaced", at: nil)
                continue
            }
            if let other = paths[package] {
                diagnostics.error(.invalidImport, "import paths \(other.path.directory.relativePath) and \(path.directory.relativePath) both declare package '\(package)'", at: nil)
                continue
            }
            guard usable else {
                failed.insert(package)
                continue
            }
            paths[package] = (path, files, Set(syntax.flatMap(\.imports).map(\.name)))
        }
        var compiled: [String: ImportableSchema] = [:]
        var inProgress: [String] = []
        func compileImport(_ package: String) -> Bool {
            if compiled[package] != nil { return true }
            if failed.contains(package) { return false }
            guard let entry = paths[package] else { return true } // built-in, or reported by the validator
            if let start = inProgress.firstIndex(of: package) {
                diagnostics.error(.invalidImport, "packages import each other: \((inProgress[start...] + [package]).joined(separator: " -> "))", at: nil)
                failed.formUnion(inProgress[start...])
                return false
            }
            inProgress.append(package)
            defer { inProgress.removeLast() }
            for dependency in entry.imports.sorted() where !compileImport(dependency) {
                failed.insert(package)
                return false
            }
            let output = compile(files: entry.files, imports: Array(compiled.values), limits: limits)
            guard let schema = output.schema else {
                diagnostics.error(.invalidImport, "the imported schema in \(entry.path.directory.relativePath) has errors; run 'switchboard lint \(entry.path.directory.relativePath)'", at: nil)
                failed.insert(package)
                return false
            }
            compiled[package] = ImportableSchema(schema: schema, swiftModule: entry.path.swiftModule)
            return true
        }
        for package in paths.keys.sorted() { _ = compileImport(package) }
        var output = compile(directory: directory, imports: Array(compiled.values), limits: limits)
        if diagnostics.hasErrors {
            output.schema = nil
            // A package whose import path was given but failed is not "unknown": the advice to
            // pass its --import-path would be wrong; the failure is reported above.
            let misleading = Set(failed.map { "unknown package '\($0)'; pass its schema directory with --import-path" })
            output.diagnostics = diagnostics.diagnostics + output.diagnostics.filter { !($0.code == .invalidImport && misleading.contains($0.message)) }
        }
        return output
    }

    /// Reads every `*.sb` file under `directory` (recursively) and compiles them.
    /// Paths in diagnostics and headers are `directory`'s last component plus the relative path.
    public static func compile(directory: URL, limits: SchemaLimits = SchemaLimits()) -> Output {
        compile(directory: directory, imports: [], limits: limits)
    }

    static func compile(directory: URL, imports: [ImportableSchema], limits: SchemaLimits) -> Output {
        let (files, diagnostics) = readFiles(in: directory, limits: limits)
        var output = compile(files: files, imports: imports, limits: limits)
        if diagnostics.hasErrors {
            output.schema = nil
            output.diagnostics = diagnostics.diagnostics + output.diagnostics
        }
        return output
    }

    /// The `*.sb` files under `directory`, named by its last component plus their relative path.
    static func readFiles(in directory: URL, limits: SchemaLimits = SchemaLimits()) -> ([SourceFile], DiagnosticCollector) {
        var files: [SourceFile] = []
        var diagnostics = DiagnosticCollector()
        let root = directory.standardizedFileURL
        let prefix = root.lastPathComponent
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            guard url.pathExtension == fileExtension else { continue }
            let relative = url.standardizedFileURL.path.dropFirst(root.path.count).drop { $0 == "/" }
            let displayPath = prefix + "/" + relative
            switch readSchemaFile(url, maximumSize: limits.maximumFileSize) {
            case let .success(data):
                files.append(SourceFile(path: displayPath, text: String(decoding: data, as: UTF8.self)))
            case let .failure(reason):
                diagnostics.error(.unreadableFile, "cannot read \(displayPath): \(reason.text)", at: nil)
            }
        }
        return (files, diagnostics)
    }

    struct ReadFailure: Error {
        let text: String
    }

    /// A schema file's bytes: a regular file itself (a link could point at any file, whose
    /// lines diagnostics would print; a FIFO or device would block or never end), checked on
    /// the open file, of at most `maximumSize` bytes (by default ``maximumFileSize``).
    static func readSchemaFile(_ url: URL, maximumSize: Int = maximumFileSize) -> Result<Data, ReadFailure> {
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            return .failure(ReadFailure(text: errno == ELOOP ? "it is a symbolic link; schema files must be regular files" : String(cString: strerror(errno))))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(ReadFailure(text: String(cString: strerror(errno)))) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(ReadFailure(text: "it is not a regular file")) }
        guard Int(status.st_size) <= maximumSize else {
            return .failure(ReadFailure(text: "it is \(status.st_size) bytes, more than the \(maximumSize) a schema file may have"))
        }
        var data = Data(count: Int(status.st_size))
        var total = 0
        let complete = data.withUnsafeMutableBytes { buffer -> Bool in
            while total < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + total, buffer.count - total)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                total += count
            }
            return true
        }
        return complete ? .success(data) : .failure(ReadFailure(text: "it changed while it was read"))
    }
}
