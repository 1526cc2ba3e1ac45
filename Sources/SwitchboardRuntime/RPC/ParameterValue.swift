import Foundation

/// A value that can travel as text in a path segment, query parameter or header.
/// Bytes use unpadded base64url; enums use their schema name; dates are milliseconds.
public protocol ParameterValue: Sendable {
    /// The value as text, before percent-encoding.
    var parameterText: String { get }
    /// Parses text produced by ``parameterText`` (after percent-decoding).
    init?(parameterText: String)
}

extension String: ParameterValue {
    public var parameterText: String { self }
    public init?(parameterText: String) { self = parameterText }
}

extension Bool: ParameterValue {
    public var parameterText: String { self ? "true" : "false" }
    public init?(parameterText: String) {
        switch parameterText {
        case "true": self = true
        case "false": self = false
        default: return nil
        }
    }
}

extension Int32: ParameterValue {
    public var parameterText: String { String(self) }
    public init?(parameterText: String) { self.init(parameterText, radix: 10) }
}

extension Int64: ParameterValue {
    public var parameterText: String { String(self) }
    public init?(parameterText: String) { self.init(parameterText, radix: 10) }
}

extension UInt32: ParameterValue {
    public var parameterText: String { String(self) }
    public init?(parameterText: String) { self.init(parameterText, radix: 10) }
}

extension UInt64: ParameterValue {
    public var parameterText: String { String(self) }
    public init?(parameterText: String) { self.init(parameterText, radix: 10) }
}

extension Float: ParameterValue {
    public var parameterText: String { description }
    public init?(parameterText: String) { self.init(parameterText) }
}

extension Double: ParameterValue {
    public var parameterText: String { description }
    public init?(parameterText: String) { self.init(parameterText) }
}

extension Data: ParameterValue {
    public var parameterText: String { PathEncoding.base64URL(self) }
    public init?(parameterText: String) {
        guard let data = PathEncoding.base64URLDecode(parameterText[...]) else { return nil }
        self = data
    }
}

extension Date: ParameterValue {
    public var parameterText: String { String(UnixMillisTimestampCodec.millis(self)) }
    public init?(parameterText: String) {
        guard let millis = Int64(parameterText, radix: 10) else { return nil }
        // Held to the range a `Date` keeps exactly, as the codec holds a decoded one.
        self.init(timeIntervalSince1970: Double(UnixMillisTimestampCodec.clamped(millis)) / 1000)
    }
}

extension ProtoEnum {
    /// The schema name, or the number for values this schema does not name.
    public var parameterText: String {
        if let name = protoName { return "\(name)" }
        return String(rawValue)
    }

    /// Accepts a schema name or a number.
    public init?(parameterText: String) {
        if let number = Int32(parameterText, radix: 10) {
            self.init(rawValue: number)
            return
        }
        let bytes = Array(parameterText.utf8)
        let value: Self? = bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return nil }
            return Self(protoName: JSONName(borrowing: base, count: buffer.count))
        }
        guard let value else { return nil }
        self = value
    }
}
