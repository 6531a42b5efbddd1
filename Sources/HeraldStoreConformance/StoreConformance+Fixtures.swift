import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// The values the conformance cases build their records from.
extension StoreConformance {
    /// The cases' clock: whole seconds, so every store keeps the instants exactly.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// `now` moved by whole seconds.
    static func at(_ seconds: TimeInterval) -> Date { now.addingTimeInterval(seconds) }

    static let day: TimeInterval = 86_400

    /// An APNs registration with a fresh token unless one is given.
    static func ios(
        _ token: String = Fixtures.apnsToken(), user: String? = nil, device: String? = nil, channels: [String]? = nil,
        attributes: [String: JSONValue]? = nil
    ) -> InstallationRegistration {
        InstallationRegistration(
            platform: .ios, service: .apns, token: .device(token),
            profile: .init(userID: user, deviceID: device, channels: channels, attributes: attributes))
    }

    /// An FCM registration with a fresh token unless one is given.
    static func android(
        _ token: String = Fixtures.fcmToken(), user: String? = nil, device: String? = nil, channels: [String]? = nil
    ) -> InstallationRegistration {
        InstallationRegistration(
            platform: .android, service: .fcm, token: .device(token),
            profile: .init(userID: user, deviceID: device, channels: channels))
    }

    /// A Web Push registration with a fresh subscription.
    static func web(user: String? = nil, channels: [String]? = nil) -> InstallationRegistration {
        InstallationRegistration(
            platform: .web, service: .webpush, token: .webPush(Fixtures.webPushSubscription()),
            profile: .init(userID: user, channels: channels))
    }

    /// Registers and returns the stored installation.
    static func register(
        _ registration: InstallationRegistration, in store: any EngineStore, app: String = "a", now: Date = now
    ) async throws -> Installation {
        try await store.register(registration, appID: app, now: now).installation
    }

    /// A queued notification to `target` with a fresh id.
    static func notification(
        app: String = "a", target: NotificationTarget = .init(audience: .all), idempotencyKey: String? = nil,
        status: NotificationStatus = .queued, createdAt: Date = now
    ) -> PushNotification {
        PushNotification(
            id: Identifier.make(now: createdAt), appID: app, target: target, payload: NotificationPayload(title: "Hi"),
            idempotencyKey: idempotencyKey, status: status, createdAt: createdAt)
    }

    /// Stores a notification due now and claims its job for `owner`.
    static func insertAndClaim(
        _ notification: PushNotification, in store: any EngineStore, owner: String = "w1"
    ) async throws -> Job {
        let inserted = try await store.insertNotification(notification, runAt: now, idempotencyWindow: .seconds(60))
        #expect(inserted.created)
        return try #require(
            try await store.claimJob(kinds: [.notification], owner: owner, now: now, lockedUntil: at(300)))
    }

    /// Every id `resolve` yields for a target, walking pages of `limit` with the keyset cursor.
    static func resolveAll(
        _ target: NotificationTarget, app: String = "a", in store: any EngineStore, limit: Int = 2
    ) async throws -> [String] {
        var ids: [String] = []
        var after: String?
        while true {
            let page = try await store.resolve(target, appID: app, after: after, limit: limit)
            #expect(page.count <= limit)
            ids += page.map(\.installationID)
            guard page.count == limit, let last = page.last else { return ids }
            after = last.installationID
        }
    }

    /// An installation as stored, read through the engine's contract (installations by id).
    static func readBack(_ id: String, app: String = "a", in store: any EngineStore) async throws -> Installation? {
        try await store.installations(appID: app, ids: [id]).first
    }

    /// Which of these installations of an app are stored, in id order, read through the engine's
    /// contract: when they are every installation the case made, what the listing would yield.
    static func readAll(_ ids: [String], app: String = "a", in store: any EngineStore) async throws -> [String] {
        try await store.installations(appID: app, ids: ids).map(\.id)
    }

    /// Every installation of an app the listing yields with `filter`, walking pages of `limit`.
    static func listAll(
        _ filter: InstallationFilter = .init(), app: String = "a", in store: any HeraldStore, limit: Int = 2
    ) async throws -> [String] {
        var ids: [String] = []
        var after: String?
        while true {
            let page = try await store.installations(
                appID: app, filter: filter, page: .init(after: after, limit: limit))
            #expect(page.count <= limit)
            ids += page.map(\.id)
            guard page.count == limit, let last = page.last else { return ids }
            after = last.id
        }
    }

    /// Waits for the first element of a signal stream, at most `seconds`.
    /// - Returns: Whether a signal came in time.
    static func firstSignal(of stream: AsyncStream<Void>, within seconds: Double) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in stream { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
