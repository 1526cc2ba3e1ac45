// libFuzzer entry point for the service catalogue's YAML reader (providers and consumers
// read catalogues another app wrote): every input is parsed. Any crash, hang or sanitizer
// report is a finding, and so is a parse that succeeds on one spelling of the input and
// fails on the same text with Windows line ends, or gives another value.
// Build and run with scripts/fuzz.sh catalogue.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCatalogue(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    let unix = try? CatalogueYAML.parse(text, file: "fuzz.yml")
    // Only texts without carriage returns of their own: then CRLF is the same document.
    if !text.contains("\r") {
        let windows = try? CatalogueYAML.parse(text.replacingOccurrences(of: "\n", with: "\r\n"), file: "fuzz.yml")
        if unix != windows { fatalError("line ends changed the document: \(String(reflecting: text))") }
    }
    return 0
}
