import Foundation
import NIOHPACK

/// One Live Activity push to every device subscribed to a broadcast channel (iOS 18): the request of "Sending
/// broadcast push notification requests to APNs", `POST /4/broadcasts/apps/<bundle ID>` on the APNs host that takes
/// device pushes, sent with ``APNsClient/send(broadcast:)``.
///
/// The payload is an ActivityKit `aps` dictionary with `timestamp`, `event` (`update` or `end`: "You can’t use
/// broadcast push notifications to start a Live Activity") and `content-state`.
public struct APNsChannelBroadcast: Sendable {
    /// What APNs answered to an accepted broadcast.
    public struct Receipt: Sendable, Equatable {
        /// `apns-request-id`: the request's own, or one APNs made.
        public var requestID: String?
        /// `apns-unique-id`: "A server-generated unique message identifier", to quote to Apple.
        public var uniqueID: String?

        /// Creates a receipt (APNs' answer, or a test double's).
        public init(requestID: String?, uniqueID: String?) {
            self.requestID = requestID
            self.uniqueID = uniqueID
        }
    }

    /// "The payload is limited to a maximum size of 5 KB (5,120 bytes)."
    public static let maxPayloadBytes = 5120

    /// The app whose channel it is.
    public var bundleID: String
    /// The channel ID (`apns-channel-id`), base64 as the channel management service handed it out.
    public var channelID: String
    /// `apns-priority`: 10 sends at once and counts against the Live Activity budget, 5 does not.
    public var priority: APNsPriority
    /// When APNs stops trying to deliver (`apns-expiration`); nil sends 0: try once, do not store. A channel created
    /// with ``APNsChannel/StoragePolicy/noMessageStored`` takes only 0.
    public var expiration: Date?
    /// `apns-request-id`; APNs makes one when nil.
    public var requestID: UUID?
    /// The JSON payload.
    public var payload: [UInt8]

    /// Creates a broadcast.
    public init(
        bundleID: String, channelID: String, priority: APNsPriority = .immediate, expiration: Date? = nil,
        requestID: UUID? = nil, payload: [UInt8]
    ) {
        self.bundleID = bundleID
        self.channelID = channelID
        self.priority = priority
        self.expiration = expiration
        self.requestID = requestID
        self.payload = payload
    }

    /// Checks what APNs would refuse before a byte is sent: the bundle ID, the channel ID, the payload's size.
    /// - Throws: `APNsChannelError` with code `invalidRequest`.
    public func validate() throws(APNsChannelError) {
        try APNsChannelClient.validate(bundleID: bundleID)
        try APNsChannelClient.validate(channelID: channelID)
        guard !payload.isEmpty else { throw .invalidRequest("The broadcast payload is empty.") }
        guard payload.count <= Self.maxPayloadBytes else {
            throw .invalidRequest(
                "The broadcast payload is \(payload.count) bytes; APNs takes at most \(Self.maxPayloadBytes).")
        }
    }

    /// The `:path`.
    var path: String { "/4/broadcasts/apps/" + bundleID }

    /// The request headers, lower-case as HTTP/2 sends them. The broadcast API requires `apns-push-type`,
    /// `apns-priority`, `apns-expiration` and `apns-channel-id`, and takes no `apns-topic`.
    func headers(authorization: String?) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(7)
        headers.add(name: "apns-push-type", value: APNsPushType.liveactivity.rawValue)
        headers.add(name: "apns-channel-id", value: channelID)
        headers.add(name: "apns-priority", value: String(priority.rawValue))
        headers.add(name: "apns-expiration", value: String(Int(expiration?.timeIntervalSince1970 ?? 0)))
        if let requestID {
            headers.add(name: "apns-request-id", value: requestID.uuidString.lowercased(), indexing: .nonIndexable)
        }
        if let authorization { headers.add(name: "authorization", value: authorization) }
        return headers
    }
}
