import Foundation

/// Something a ``SourceDevice`` saw (a classified camera event), kept with the notification it
/// caused. Whether a push went out is not stored twice: ``pushSentAt`` is read from the
/// notification's first accepted delivery.
public struct SourceEvent: Sendable, Equatable {
    /// Herald's id of the event.
    public var id: String
    public var appID: String
    /// Who sent the event in (the dialect: `aovis`, `argusai`): producers' ids are unique per
    /// producer, so two producers' events never deduplicate against each other.
    public var producer: String
    /// The producer's id of the event, unique within the app and producer: a repeated intake
    /// returns the first.
    public var externalID: String
    /// The producer's id of its own record of the event (AOVIS: `CloudEvent.id`, which the app opens
    /// from the deep link), unique within the app and producer; nil when the producer keeps none.
    public var recordID: String?
    /// The source device's id.
    public var sourceDeviceID: String
    /// The users who owned the device (actively) when the event came in: its audience.
    public var owners: [String]
    /// What was seen (AOVIS: `person`, `vehicle`, `pet`, `package`, `other`).
    public var type: String
    /// A short description of what was seen.
    public var summary: String
    /// Where the event's picture is (a storage key or URL), when there is one.
    public var thumbnail: String?
    /// Where the event is in its pipeline (AOVIS: `classified`).
    public var status: String
    /// When the device saw it, when the producer says.
    public var occurredAt: Date?
    /// The notification sent to the owners, once submitted.
    public var notificationID: String?
    /// When a device first accepted the notification; nil while none has.
    public var pushSentAt: Date?
    public var createdAt: Date

    /// Whether any device accepted the event's notification.
    public var pushSent: Bool { pushSentAt != nil }

    /// The id a client opens the event by: the producer's record id, else Herald's.
    public var publicID: String { recordID ?? id }

    /// Producers' ids are at most this long.
    public static let maxProducerIDLength = 128

    /// Whether a producer's id is 1 to 128 unreserved URL characters (RFC 3986 §2.3): ids are
    /// written into deep links and URL paths as they are.
    public static func isValidProducerID(_ id: String) -> Bool {
        (1...maxProducerIDLength).contains(id.utf8.count) && id.utf8.allSatisfy(\.isUnreservedURLCharacter)
    }

    /// Creates an event record.
    public init(
        id: String, appID: String, producer: String, externalID: String, recordID: String? = nil,
        sourceDeviceID: String,
        owners: [String] = [], type: String,
        summary: String, thumbnail: String? = nil, status: String, occurredAt: Date? = nil,
        notificationID: String? = nil, pushSentAt: Date? = nil, createdAt: Date
    ) {
        self.id = id
        self.appID = appID
        self.producer = producer
        self.externalID = externalID
        self.recordID = recordID
        self.sourceDeviceID = sourceDeviceID
        self.owners = owners
        self.type = type
        self.summary = summary
        self.thumbnail = thumbnail
        self.status = status
        self.occurredAt = occurredAt
        self.notificationID = notificationID
        self.pushSentAt = pushSentAt
        self.createdAt = createdAt
    }
}

extension UInt8 {
    /// RFC 3986 §2.3: `A-Z a-z 0-9 - . _ ~`.
    fileprivate var isUnreservedURLCharacter: Bool {
        switch self {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
