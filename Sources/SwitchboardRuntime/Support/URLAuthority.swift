import Foundation

/// Checks the authority (`host:port`) of a URL's text before anything connects to it.
/// Foundation's `URL` keeps a port of 70000 (which the resolver would cut to 16 bits: port
/// 4464, another server) and drops a port too long to parse (which would fall back to the
/// scheme's default port), and accepts an empty host.
public enum URLAuthority {
    /// What is wrong with the host or port in `text`, or `nil` when both are usable: a host
    /// is required, and a port, if given, is a number from 1 to 65535.
    public static func problem(in text: String) -> String? {
        let afterScheme = text.range(of: "//").map(\.upperBound) ?? text.startIndex
        let authorityEnd = text[afterScheme...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        var authority = text[afterScheme..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let host: Substring
        let port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return "the host has an unclosed [" }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let rest = authority[authority.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return "there is text after the [host]" }
            port = rest.isEmpty ? nil : rest.dropFirst()
        } else if let colon = authority.firstIndex(of: ":") {
            (host, port) = (authority[..<colon], authority[authority.index(after: colon)...])
        } else {
            (host, port) = (authority, nil)
        }
        guard !host.isEmpty else { return "there is no host" }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port), (1...65535).contains(number) else {
                return "the port must be a number from 1 to 65535, got '\(port)'"
            }
        }
        return nil
    }
}
