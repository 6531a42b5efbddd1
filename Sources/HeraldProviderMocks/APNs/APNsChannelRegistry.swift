import Foundation
import Synchronization

/// The broadcast channels of one APNs environment, shared by the mock channel management service
/// (``MockAPNsChannelServer``), which creates, reads, lists and deletes them, and the mock APNs
/// (``MockAPNsServer``), whose broadcast endpoint accepts only a channel that exists for the app.
///
/// ```swift
/// let channels = APNsChannelRegistry()
/// let management = try await MockAPNsChannelServer.start(ca: ca, credentials: [credential], channels: channels)
/// let apns = try await MockAPNsServer.start(ca: ca, credentials: [credential], channels: channels)
/// ```
///
/// A test may also create or delete channels directly, as another provider server would.
public final class APNsChannelRegistry: Sendable {
    /// Whether APNs keeps a broadcast for devices that are offline ("Sending channel management requests to APNs"):
    /// fixed when the channel is created.
    public enum MessageStoragePolicy: Int, Sendable, Hashable, CaseIterable {
        /// `0`, "No Message Stored": a broadcast on the channel must carry `apns-expiration: 0`.
        case noMessageStored = 0
        /// `1`, "Most Recent Message Stored": the latest broadcast is kept for up to 8 hours.
        case mostRecentMessageStored = 1
    }

    /// One channel.
    public struct Channel: Sendable, Hashable {
        /// The channel ID, base64 as APNs hands it out in `apns-channel-id`.
        public var id: String
        /// The app the channel belongs to.
        public var bundleID: String
        /// The message storage policy it was created with.
        public var messageStoragePolicy: MessageStoragePolicy
    }

    /// "You can maintain up to 10,000 channels for your app in the development and production environment,
    /// respectively."
    public static let appleLimit = 10_000

    /// How many channels one app may have at once; one more is refused with `CannotCreateChannelConfig`.
    public let limitPerApp: Int

    private let state = Mutex<[Channel]>([])

    /// Creates an empty registry.
    /// - Parameter limitPerApp: The channels an app may keep at once (Apple's 10,000 unless a test lowers it).
    public init(limitPerApp: Int = APNsChannelRegistry.appleLimit) {
        self.limitPerApp = limitPerApp
    }

    /// Every channel, oldest first.
    public var channels: [Channel] {
        state.withLock { $0 }
    }

    /// The channels of `bundleID`, oldest first.
    public func channels(bundleID: String) -> [Channel] {
        state.withLock { $0.filter { $0.bundleID == bundleID } }
    }

    /// The channel `id` of `bundleID`, if it exists.
    public func channel(id: String, bundleID: String) -> Channel? {
        state.withLock { $0.first { $0.id == id && $0.bundleID == bundleID } }
    }

    /// Creates a channel with a new random ID, as APNs does ("you can’t request a channel with a specific ID").
    /// - Returns: The channel, or nil when `bundleID` already has ``limitPerApp`` channels.
    @discardableResult
    public func create(
        bundleID: String, messageStoragePolicy: MessageStoragePolicy = .noMessageStored
    ) -> Channel? {
        var random = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        let channel = Channel(
            id: Data(bytes).base64EncodedString(), bundleID: bundleID, messageStoragePolicy: messageStoragePolicy)
        return state.withLock { channels in
            guard channels.count(where: { $0.bundleID == bundleID }) < limitPerApp else { return nil }
            channels.append(channel)
            return channel
        }
    }

    /// Deletes the channel `id` of `bundleID`.
    /// - Returns: Whether it existed.
    @discardableResult
    public func delete(id: String, bundleID: String) -> Bool {
        state.withLock { channels in
            guard let index = channels.firstIndex(where: { $0.id == id && $0.bundleID == bundleID }) else {
                return false
            }
            channels.remove(at: index)
            return true
        }
    }
}
