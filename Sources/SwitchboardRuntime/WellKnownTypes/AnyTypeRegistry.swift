import Foundation

/// The message types a `google.protobuf.Any` may hold in JSON, by full name.
///
/// Any's JSON spells the packed message's fields, so reading or writing it needs the type
/// behind the URL. The well-known types are always known; register your own once, at start-up:
/// `AnyTypeRegistry.shared.register(ChatMessage.self)`. Decoding uses
/// ``JSONDecodingOptions/anyTypes`` and encoding ``JSONWriter/anyTypes``; both default to
/// ``shared``.
public final class AnyTypeRegistry: Sendable, Hashable {
    private let types: Locked<[String: any ProtoMessage.Type]>

    /// The registry JSON uses unless told otherwise.
    public static let shared = AnyTypeRegistry()

    /// A registry that knows the well-known types.
    public init() {
        let wellKnown: [any ProtoMessage.Type] = [
            ProtoTimestamp.self, ProtoDuration.self, ProtoEmpty.self, ProtoFieldMask.self, ProtoAny.self,
            ProtoStruct.self, ProtoValue.self, ProtoListValue.self, ProtoDoubleValue.self, ProtoFloatValue.self,
            ProtoInt64Value.self, ProtoUInt64Value.self, ProtoInt32Value.self, ProtoUInt32Value.self,
            ProtoBoolValue.self, ProtoStringValue.self, ProtoBytesValue.self,
        ]
        types = Locked(Dictionary(uniqueKeysWithValues: wellKnown.map { ($0.protoMessageName, $0) }))
    }

    /// Makes `type` known under its full name (``ProtoMessage/protoMessageName``).
    public func register(_ type: any ProtoMessage.Type) {
        // Read before locking: a type's name is its own code, which must not run under the lock.
        let name = type.protoMessageName
        types.withLock { $0[name] = type }
    }

    /// The type a type URL names: its last `/`-separated component is the full name,
    /// compared byte for byte as protobuf compares it.
    public func type(forURL url: String) -> (any ProtoMessage.Type)? {
        let name = url.lastIndex(of: "/").map { String(url[url.index(after: $0)...]) } ?? url
        guard let type = types.withLock({ $0[name] }) else { return nil }
        // A String key matches canonically equivalent names too ("\u{212A}", the Kelvin sign,
        // for "K"); checked after the lock, since the name is the type's own code.
        return type.protoMessageName.utf8.elementsEqual(name.utf8) ? type : nil
    }

    public static func == (lhs: AnyTypeRegistry, rhs: AnyTypeRegistry) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
