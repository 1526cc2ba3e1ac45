/// The identifier of a SETTINGS parameter (RFC 9113 §6.5.2). Unknown identifiers must be
/// ignored, so this is a struct that keeps any value.
public struct HTTP2SettingID: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The largest HPACK table the sender lets its peer's encoder use.
    public static let headerTableSize = HTTP2SettingID(rawValue: 0x1)
    /// Whether server push is allowed (always 0 here).
    public static let enablePush = HTTP2SettingID(rawValue: 0x2)
    /// How many streams the peer may open towards the sender at once.
    public static let maxConcurrentStreams = HTTP2SettingID(rawValue: 0x3)
    /// The first flow-control window of every stream the sender receives on.
    public static let initialWindowSize = HTTP2SettingID(rawValue: 0x4)
    /// The largest frame payload the sender accepts.
    public static let maxFrameSize = HTTP2SettingID(rawValue: 0x5)
    /// The largest header list (HPACK-sized) the sender accepts.
    public static let maxHeaderListSize = HTTP2SettingID(rawValue: 0x6)

    public var description: String {
        switch self {
        case .headerTableSize: "HEADER_TABLE_SIZE"
        case .enablePush: "ENABLE_PUSH"
        case .maxConcurrentStreams: "MAX_CONCURRENT_STREAMS"
        case .initialWindowSize: "INITIAL_WINDOW_SIZE"
        case .maxFrameSize: "MAX_FRAME_SIZE"
        case .maxHeaderListSize: "MAX_HEADER_LIST_SIZE"
        default: "0x" + String(rawValue, radix: 16)
        }
    }
}

/// One SETTINGS parameter and its value.
public struct HTTP2Setting: Sendable, Hashable, CustomStringConvertible {
    /// Which parameter.
    public var id: HTTP2SettingID
    /// Its value.
    public var value: UInt32

    /// `id` set to `value`.
    public init(_ id: HTTP2SettingID, _ value: UInt32) {
        self.id = id
        self.value = value
    }

    public var description: String { "\(id)=\(value)" }
}

/// The settings one side of a connection runs with, starting from the RFC's defaults and
/// changed by each SETTINGS frame that side sends.
public struct HTTP2Settings: Sendable, Hashable {
    /// HEADER_TABLE_SIZE (default 4,096).
    public var headerTableSize: UInt32 = 4096
    /// ENABLE_PUSH (default true; this implementation always sends false).
    public var enablePush = true
    /// MAX_CONCURRENT_STREAMS (default unlimited).
    public var maxConcurrentStreams: UInt32 = .max
    /// INITIAL_WINDOW_SIZE (default 65,535).
    public var initialWindowSize: UInt32 = 65_535
    /// MAX_FRAME_SIZE (default 16,384).
    public var maxFrameSize: UInt32 = 16_384
    /// MAX_HEADER_LIST_SIZE (default unlimited).
    public var maxHeaderListSize: UInt32 = .max

    /// The RFC's initial values.
    public init() {}

    /// Applies one parameter, checking the ranges RFC 9113 §6.5.2 sets; unknown ones are ignored.
    public mutating func apply(_ setting: HTTP2Setting) throws(HTTP2ProtocolViolation) {
        switch setting.id {
        case .headerTableSize: headerTableSize = setting.value
        case .enablePush:
            guard setting.value <= 1 else { throw HTTP2ProtocolViolation(.protocolError, "ENABLE_PUSH must be 0 or 1") }
            enablePush = setting.value == 1
        case .maxConcurrentStreams: maxConcurrentStreams = setting.value
        case .initialWindowSize:
            guard setting.value <= HTTP2FlowControl.maximumWindow else {
                throw HTTP2ProtocolViolation(.flowControlError, "INITIAL_WINDOW_SIZE above 2^31-1")
            }
            initialWindowSize = setting.value
        case .maxFrameSize:
            guard (HTTP2FrameLimits.minimumMaxFrameSize...HTTP2FrameLimits.maximumMaxFrameSize).contains(setting.value) else {
                throw HTTP2ProtocolViolation(.protocolError, "MAX_FRAME_SIZE outside 16,384...16,777,215")
            }
            maxFrameSize = setting.value
        case .maxHeaderListSize: maxHeaderListSize = setting.value
        default: break
        }
    }
}

/// Bounds fixed by RFC 9113.
public enum HTTP2FrameLimits {
    /// The smallest MAX_FRAME_SIZE (and the default).
    public static let minimumMaxFrameSize: UInt32 = 16_384
    /// The largest MAX_FRAME_SIZE (a 24-bit length).
    public static let maximumMaxFrameSize: UInt32 = (1 << 24) - 1
    /// Bytes in a frame header.
    public static let headerLength = 9
}

/// Flow-control bounds fixed by RFC 9113 §6.9.
public enum HTTP2FlowControl {
    /// The largest a window may grow (2^31-1).
    public static let maximumWindow: UInt32 = 0x7fff_ffff
    /// Every window's size before any SETTINGS or WINDOW_UPDATE.
    public static let defaultWindow: UInt32 = 65_535
    /// A connection WINDOW_UPDATE below this (1 KiB) while streams wait for window counts
    /// against the control-frame limit (`HTTP2ConnectionConfiguration.controlFrameLimit`).
    public static let smallWindowUpdate: UInt32 = 1024
}
