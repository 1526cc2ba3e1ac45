import Foundation

/// Certificates in PEM text, for TLS stacks that take DER (Network.framework's trust anchors).
enum PEMCertificates {
    /// The DER bytes of each well-formed `CERTIFICATE` block in `pem`, in order; other blocks
    /// (keys, CRLs) and blocks whose base64 does not decode are skipped.
    static func der(in pem: String) -> [Data] {
        let begin = "-----BEGIN CERTIFICATE-----", end = "-----END CERTIFICATE-----"
        var certificates: [Data] = []
        var rest = pem[...]
        while let start = rest.range(of: begin), let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) {
            let body = rest[start.upperBound..<stop.lowerBound]
            if let der = Data(base64Encoded: String(body), options: .ignoreUnknownCharacters), !der.isEmpty {
                certificates.append(der)
            }
            rest = rest[stop.upperBound...]
        }
        return certificates
    }
}
