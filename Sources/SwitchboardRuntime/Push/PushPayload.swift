import Foundation

/// A message a push notification carries for one user, marked `@pushPayload(field)` in the
/// schema. A device can hold several accounts and the notification service does not know
/// which is logged in, so the app must check whom a payload is for before showing it:
/// ``PushPayload/decode(_:encoding:loggedInUser:)`` does both steps.
public protocol PushPayload: ProtoMessage {
    /// The type of the user id the payload is bound to.
    associatedtype RecipientID: Hashable & Sendable

    /// The user the payload is meant for (the field the schema names).
    var recipientID: RecipientID { get }
}

/// Why a push payload was refused.
public enum PushPayloadRejection<RecipientID: Hashable & Sendable>: Error, Sendable, Hashable, CustomStringConvertible {
    /// The payload is for another user than the one logged in: show nothing.
    case addressedToAnotherUser(RecipientID)
    /// Nobody is logged in, so no payload may be shown.
    case noUserLoggedIn
    /// The bytes are not a payload of this type.
    case undecodable(String)

    public var description: String {
        switch self {
        // The id stays out of logs: it identifies an account.
        case .addressedToAnotherUser: return "the push payload is for another user than the one logged in"
        case .noUserLoggedIn: return "a push payload arrived while no user is logged in"
        case let .undecodable(detail): return "the push payload does not decode: \(detail)"
        }
    }
}

extension PushPayload {
    /// Decodes a payload (protobuf bytes or protobuf JSON) and accepts it only if it is
    /// addressed to `loggedInUser`.
    public static func decode(
        _ bytes: Data, encoding: BodyEncoding, loggedInUser: RecipientID?
    ) -> Result<Self, PushPayloadRejection<RecipientID>> {
        let payload: Self
        do {
            payload = try Self(decoding: bytes, encoding: encoding)
        } catch {
            return .failure(.undecodable("\(error)"))
        }
        return payload.accepted(for: loggedInUser)
    }

    /// The payload if it is addressed to `loggedInUser`, else why not.
    public func accepted(for loggedInUser: RecipientID?) -> Result<Self, PushPayloadRejection<RecipientID>> {
        guard let loggedInUser else { return .failure(.noUserLoggedIn) }
        guard recipientID == loggedInUser else { return .failure(.addressedToAnotherUser(recipientID)) }
        return .success(self)
    }
}
