/// A broadcast channel as APNs' channel management service describes it ("Sending channel management requests to
/// APNs"): devices on iOS 18 subscribe to it with its ID, and one broadcast on it updates or ends the Live Activity of
/// every subscriber.
public struct APNsChannel: Sendable, Hashable {
    /// Whether APNs keeps a broadcast for devices that are offline; fixed when the channel is created.
    public enum StoragePolicy: Int, Sendable, Hashable, CaseIterable {
        /// `0`, "No Message Stored": for frequent updates, with a higher publishing budget. A broadcast on the channel
        /// must expire at once (`apns-expiration: 0`).
        case noMessageStored = 0
        /// `1`, "Most Recent Message Stored": the latest broadcast is kept for offline devices for up to 8 hours.
        case mostRecentMessageStored = 1
    }

    /// The channel ID: base64 text, as APNs handed it out in `apns-channel-id`. Apple: "don’t make assumptions on the
    /// channel ID size".
    public var id: String
    /// The storage policy it was created with (`message-storage-policy`).
    public var storagePolicy: StoragePolicy
    /// The push type it carries (`push-type`): `LiveActivity`, the only one APNs offers.
    public var pushType: String

    /// Creates a channel description.
    public init(id: String, storagePolicy: StoragePolicy, pushType: String = "LiveActivity") {
        self.id = id
        self.storagePolicy = storagePolicy
        self.pushType = pushType
    }
}
