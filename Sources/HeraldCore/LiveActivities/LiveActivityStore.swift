import Foundation

/// An activity Herald knows: one it started by push-to-start, or one an app started and registered.
public struct LiveActivity: Sendable, Equatable {
    public var appID: String
    public var id: String
    public var attributesType: String
    /// The last revision assigned (the start is 1).
    public var revision: Int
    /// When an `end` was accepted; nil while it runs.
    public var endedAt: Date?
    /// When the ended activity leaves the Lock Screen (its tokens are forgotten after it).
    public var dismissalAt: Date?
    /// Installations taking part (sent its start, or registered a token for it).
    public var devices: Int
    public var createdAt: Date
    public var updatedAt: Date

    /// Creates a record.
    public init(
        appID: String, id: String, attributesType: String, revision: Int, endedAt: Date? = nil,
        dismissalAt: Date? = nil, devices: Int = 0, createdAt: Date, updatedAt: Date
    ) {
        self.appID = appID
        self.id = id
        self.attributesType = attributesType
        self.revision = revision
        self.endedAt = endedAt
        self.dismissalAt = dismissalAt
        self.devices = devices
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// How long an ended activity without a dismissal date stays on the Lock Screen: ActivityKit
    /// removes it after at most four hours.
    public static let defaultDismissal: TimeInterval = 4 * 3600
}

/// The revision the store assigned an accepted update, and whether it goes at high priority.
public struct LiveActivityRevision: Sendable, Equatable {
    public var revision: Int
    /// High priority was asked for and the activity's hourly budget had room.
    public var highPriority: Bool
    /// The ActivityKit `timestamp` (seconds): never lower than an earlier revision's, as the device
    /// ignores an update older than the one it shows and APNs' timestamp has one-second resolution.
    public var timestamp: Int

    /// Creates an assignment.
    public init(revision: Int, highPriority: Bool, timestamp: Int) {
        self.revision = revision
        self.highPriority = highPriority
        self.timestamp = timestamp
    }

    /// The timestamp of the revision after one stamped `last`: now, or `last` when the clock is
    /// behind it (another node's clock, the same second).
    public static func timestamp(after last: Int, now: Date) -> Int { max(last, Int(now.timeIntervalSince1970)) }
}

/// A token an installation registered for Live Activities, as lists show it (never whole).
public struct LiveActivityTokenInfo: Sendable, Equatable {
    /// The activity, or nil for a push-to-start token.
    public var activityID: String?
    public var attributesType: String
    /// The token's last characters; nil when the installation takes part without a token of its own
    /// (an Android or direct-channel device: its installation's token carries the activity).
    public var tokenSuffix: String?
    public var updatedAt: Date

    /// Creates a listing entry.
    public init(activityID: String?, attributesType: String, tokenSuffix: String?, updatedAt: Date) {
        self.activityID = activityID
        self.attributesType = attributesType
        self.tokenSuffix = tokenSuffix
        self.updatedAt = updatedAt
    }
}

/// What the store says about sending one revision of an activity to one installation.
public enum LiveActivityClaim: Sendable, Equatable {
    /// Send it, to this token (nil: the installation's own token: Android, the direct channel).
    case send(token: String?)
    /// A later revision was sent (or is being sent) to the installation: this one never goes.
    case superseded
    /// An earlier revision is being sent to the installation until this instant: wait for it.
    case busy(until: Date)
    /// The installation has no token for it (no push-to-start token for the attributes type, or the
    /// app has not reported the activity's token yet).
    case noToken
}

/// A token the provider refused: the store forgets it, and only it (not the installation's token).
public struct LiveActivityTokenDrop: Sendable, Equatable {
    public var installationID: String
    /// The activity whose token it was, or nil for the push-to-start token of `attributesType`.
    public var activityID: String?
    public var attributesType: String

    /// Creates a drop.
    public init(installationID: String, activityID: String?, attributesType: String) {
        self.installationID = installationID
        self.activityID = activityID
        self.attributesType = attributesType
    }
}

/// A broadcast channel (iOS 18) created through APNs' channel management service.
public struct LiveActivityChannel: Sendable, Equatable {
    /// APNs' message storage policy: keep nothing for offline devices, or the most recent message.
    public enum StoragePolicy: String, Sendable, CaseIterable {
        case none
        case mostRecent = "most_recent"

        /// The `message-storage-policy` value APNs takes.
        public var apnsValue: Int { self == .none ? 0 : 1 }
    }

    public var appID: String
    /// Herald's id of the channel.
    public var id: String
    /// APNs' id of the channel (base64), which devices subscribe to.
    public var apnsChannelID: String
    public var storagePolicy: StoragePolicy
    /// The APNs environment the channel lives in.
    public var environment: PushEnvironment
    public var createdAt: Date

    /// The id of the activity record that counts the channel's revisions and high-priority budget
    /// (no activity of the API can have it); deleted with the channel.
    public var counterID: String { Self.counterID(id) }

    /// The counter's id of the channel `id`.
    public static func counterID(_ id: String) -> String { "#channel/" + id }

    /// Creates a record.
    public init(
        appID: String, id: String, apnsChannelID: String, storagePolicy: StoragePolicy, environment: PushEnvironment,
        createdAt: Date
    ) {
        self.appID = appID
        self.id = id
        self.apnsChannelID = apnsChannelID
        self.storagePolicy = storagePolicy
        self.environment = environment
        self.createdAt = createdAt
    }
}

/// What the stores keep for Live Activities (docs/live-activities.md): activities with their
/// revision counter and high-priority budget, each installation's push-to-start tokens and its
/// part in each activity (its activity token, sealed like every push token, and the last revision
/// sent to it), and broadcast channels.
public protocol LiveActivityStore: Sendable {
    /// Records an activity Herald starts (revision 1). Nothing when the id is taken.
    /// - Returns: Whether it was created.
    func createLiveActivity(_ activity: LiveActivity) async throws -> Bool

    /// An activity of the app, with its device count.
    func liveActivity(appID: String, id: String) async throws -> LiveActivity?

    /// Assigns the next revision of an activity for an accepted `update` or `end`, and counts a
    /// high-priority push against the activity's budget of `highPriorityPerHour` in the hour that
    /// began at the activity's first high-priority push of the window. An `end` marks the activity
    /// ended, to be dismissed at `dismissalAt`.
    /// - Returns: nil when the activity does not exist.
    /// - Throws: `HeraldError` `live_activity_ended` when it has ended.
    func nextLiveActivityRevision(
        appID: String, id: String, end: Bool, dismissalAt: Date?, wantsHighPriority: Bool, highPriorityPerHour: Int,
        now: Date
    ) async throws -> LiveActivityRevision?

    /// Stores (or replaces) an installation's push-to-start token for an attributes type.
    func setPushToStartToken(
        installationID: String, attributesType: String, token: String, service: PushService, now: Date
    ) async throws

    /// Forgets an installation's push-to-start token. - Returns: Whether there was one.
    func removePushToStartToken(installationID: String, attributesType: String) async throws -> Bool

    /// Records an installation's part in an activity with its token (nil: the installation's own
    /// token carries it), creating the activity when the app started it itself.
    func setActivityToken(
        appID: String, installationID: String, activityID: String, attributesType: String, token: String?,
        service: PushService, now: Date
    ) async throws

    /// Forgets an installation's part in an activity (the activity ended on the device).
    /// - Returns: Whether it had one.
    func removeActivityToken(installationID: String, activityID: String) async throws -> Bool

    /// An installation's push-to-start tokens and activities, as lists show them.
    func liveActivityTokens(installationID: String) async throws -> [LiveActivityTokenInfo]

    /// Claims the sending of one revision of an activity (or an updatable notification's counter) to
    /// installations, through the tokens `tokens` names (a start: revision 1, through their
    /// push-to-start tokens for the type, making them members). A claim granted holds the
    /// installation until `until` or ``releaseLiveActivitySends(appID:activityID:revision:installationIDs:)``.
    func claimLiveActivitySends(
        appID: String, activityID: String, attributesType: String, revision: Int, tokens: LiveActivityClaimTokens,
        installationIDs: [String], services: [String: PushService], now: Date, until: Date
    ) async throws -> [String: LiveActivityClaim]

    /// Ends the claims of a revision once its sends are answered.
    func releaseLiveActivitySends(
        appID: String, activityID: String, revision: Int, installationIDs: [String]
    ) async throws

    /// Forgets tokens a provider refused.
    func dropLiveActivityTokens(_ drops: [LiveActivityTokenDrop]) async throws

    /// Forgets the parts of activities ended and dismissed before `cutoff`, and those activities.
    /// - Returns: How many installations' parts were forgotten.
    func forgetDismissedLiveActivities(before cutoff: Date) async throws -> Int

    /// Records a broadcast channel. - Returns: false when the id is taken.
    func createLiveActivityChannel(_ channel: LiveActivityChannel) async throws -> Bool

    /// The app's channels, oldest first.
    func liveActivityChannels(appID: String) async throws -> [LiveActivityChannel]

    /// One channel of the app.
    func liveActivityChannel(appID: String, id: String) async throws -> LiveActivityChannel?

    /// Deletes a channel's record. - Returns: Whether there was one.
    func deleteLiveActivityChannel(appID: String, id: String) async throws -> Bool
}
