import Foundation
import SwitchboardHTTP2
import SwitchboardRuntime

/// How gRPC carries metadata in HTTP/2 headers: lowercase names, `-bin` values in base64,
/// and `grpc-message` percent-encoded.
public enum GRPCMetadata {
    /// Names a call's metadata may not use: HTTP/2's and gRPC's own.
    static let reservedNames: Set<String> = ["content-type", "te", "grpc-timeout", "grpc-encoding", "grpc-accept-encoding",
                                             "grpc-status", "grpc-message", "grpc-status-details-bin", "user-agent", "accept",
                                             "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"]

    /// `grpc-message` as sent: bytes outside printable ASCII and `%` percent-encoded.
    public static func encodeMessage(_ message: String) -> String {
        var encoded = ""
        for byte in message.utf8 {
            if byte >= 0x20, byte <= 0x7e, byte != UInt8(ascii: "%") {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }

    /// `grpc-message` as received, decoded; malformed escapes are kept as they are.
    public static func decodeMessage(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let value = UInt8(String(decoding: bytes[index + 1...index + 2], as: UTF8.self), radix: 16) {
                decoded.append(value)
                index += 3
            } else {
                decoded.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    /// A `-bin` value decoded (padded or not, as the spec allows).
    public static func decodeBinary(_ text: String) -> Data? {
        var padded = text.trimmingCharacters(in: .whitespaces)
        while padded.count % 4 != 0 { padded += "=" }
        return Data(base64Encoded: padded)
    }

    /// A request's headers as call metadata: lowercased, reserved names dropped, values
    /// that HTTP/2 cannot carry dropped, secrets never indexed by HPACK.
    static func requestMetadata(_ headers: RPCHeaders) -> [HPACKHeader] {
        var fields: [HPACKHeader] = []
        for (name, value) in headers {
            let lowered = name.lowercased()
            guard !reservedNames.contains(lowered), !lowered.hasPrefix(":"), isValidName(lowered), isValidValue(value) else { continue }
            // A secret kept out of HPACK's tables cannot be guessed through compression.
            fields.append(HPACKHeader(lowered, value, indexing: LogRedaction.showsValue(ofHeader: lowered) ? .automatic : .never))
        }
        return fields
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
    }

    static func isValidValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 != 0 && $0 != 10 && $0 != 13 }
    }
}
