import Foundation
import HTTPTypes
import HeraldAPNs
import HeraldCore
import HeraldEngine
import HeraldPostgres
import HeraldProviderMocks
import HeraldSQLite
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldAPI
@testable import HeraldArgusAI
@testable import HeraldLeanCloud

/// Clean-up rules per app: an ArgusAI app and a LeanCloud app on one Herald, each device crossing
/// its document's ages on a test clock while the engine's one clean-up job runs, on both stores.
@Suite("Lifecycle per app: ArgusAI's and LeanCloud's clean-up rules on one Herald", .serialized)
struct LifecycleTests {
    static let day: TimeInterval = 86_400
    static let argusServerKey = "hsk_argus-server-key-0123456789"
    static let leanCloudServerKey = "hsk_lc-server-key-0123456789"

    /// Two apps: `argus` (ArgusAI, user tokens) and `lc` (LeanCloud, and ArgusAI's settings too).
    static let environment: [String: String] = [
        "HERALD_APPS": "argus,lc",
        "HERALD_APP_ARGUS_SERVER_KEY": argusServerKey, "HERALD_APP_ARGUS_CLIENT_KEY": "hck_argus-client-key-0123456789",
        "HERALD_APP_ARGUS_JWT_HS256_SECRET": ServerHarness.jwtSecret,
        "HERALD_APP_LC_SERVER_KEY": leanCloudServerKey, "HERALD_APP_LC_CLIENT_KEY": "hck_lc-client-key-0123456789",
        "HERALD_APP_LC_LEANCLOUD_APP_ID": LeanCloudClient.appID,
        "HERALD_APP_LC_LEANCLOUD_APP_KEY": LeanCloudClient.appKey,
        "HERALD_APP_LC_LEANCLOUD_MASTER_KEY": LeanCloudClient.masterKey,
        "HERALD_APP_LC_ARGUS_REGISTER_RATE_LIMIT": "50",
    ]

    /// ArgusAI's rules (002): inactive tokens after 30 days, 5+ failures and no success in 7 days,
    /// "not used in 90 days" off.
    static let argusAI = CleanupPolicy(
        invalidAfter: .seconds(30 * 86_400), failureThreshold: 5, failingAfter: .seconds(7 * 86_400),
        unseenAfter: nil, undeliveredAfter: nil, notificationRetention: .seconds(30 * 86_400), staleAfter: nil)

    /// LeanCloud's (003): invalid after 60 days unopened, deleted 60 days invalid or 120 unopened.
    static let leanCloud = CleanupPolicy(
        invalidAfter: .seconds(60 * 86_400), failureThreshold: 5, failingAfter: nil,
        unseenAfter: .seconds(120 * 86_400), undeliveredAfter: nil, notificationRetention: .seconds(30 * 86_400),
        staleAfter: .seconds(60 * 86_400))

    @Test("ArgusAI's rules by default, LeanCloud's for an app with leancloud (argus too); app.<id>.lifecycle.* wins")
    func configuration() async throws {
        let plain = try await HeraldConfiguration.load(file: nil, environment: Self.environment).engine
        #expect(plain.cleanupPolicy == Self.argusAI)
        #expect(plain.cleanupPlan.policy(appID: "argus") == Self.argusAI)
        #expect(plain.cleanupPlan.policy(appID: "lc") == Self.leanCloud)

        var environment = Self.environment
        environment["HERALD_APPS"] = "argus,lc,tuned"
        environment["HERALD_APP_TUNED_SERVER_KEY"] = "hsk_tuned-server-key-0123456789"
        environment["HERALD_APP_TUNED_CLIENT_KEY"] = "hck_tuned-client-key-0123456789"
        environment["HERALD_APP_TUNED_LEANCLOUD_APP_ID"] = "tuned-lc-id"
        environment["HERALD_APP_TUNED_LEANCLOUD_APP_KEY"] = "tuned-lc-key-0123"
        // Explicit keys over LeanCloud's defaults: no stale rule, 200 days unseen, the failing rule on.
        environment["HERALD_APP_TUNED_LIFECYCLE_STALE_DAYS"] = "0"
        environment["HERALD_APP_TUNED_LIFECYCLE_UNSEEN_DAYS"] = "200"
        environment["HERALD_APP_TUNED_LIFECYCLE_FAILING_DAYS"] = "7"
        // ArgusAI's optional "not used in 90 days", on for one app.
        environment["HERALD_APP_ARGUS_LIFECYCLE_UNDELIVERED_DAYS"] = "90"
        // The engine's keys move every app without its own, and LeanCloud's notification retention.
        environment["HERALD_ENGINE_CLEANUP_INVALID_DAYS"] = "10"
        environment["HERALD_ENGINE_CLEANUP_RETENTION_DAYS"] = "5"
        let engine = try await HeraldConfiguration.load(file: nil, environment: environment).engine
        var base = Self.argusAI
        base.invalidAfter = .seconds(10 * 86_400)
        base.notificationRetention = .seconds(5 * 86_400)
        #expect(engine.cleanupPolicy == base)
        var argus = base
        argus.undeliveredAfter = .seconds(90 * 86_400)
        #expect(engine.cleanupPlan.policy(appID: "argus") == argus)
        var leanCloud = Self.leanCloud
        leanCloud.notificationRetention = .seconds(5 * 86_400)
        #expect(engine.cleanupPlan.policy(appID: "lc") == leanCloud)
        var tuned = leanCloud
        tuned.staleAfter = nil
        tuned.unseenAfter = .seconds(200 * 86_400)
        tuned.failingAfter = .seconds(7 * 86_400)
        #expect(engine.cleanupPlan.policy(appID: "tuned") == tuned)

        // The one generated app, `default`, with LeanCloud configured.
        let single = try await HeraldConfiguration.load(
            file: nil,
            environment: [
                "HERALD_APP_DEFAULT_LEANCLOUD_APP_ID": "lc-id", "HERALD_APP_DEFAULT_LEANCLOUD_APP_KEY": "lc-key-0123",
            ]
        ).engine
        #expect(single.cleanupPlan.policy(appID: AppConfiguration.defaultID) == Self.leanCloud)
    }

    @Test("A lifecycle value out of range, not a number, or the engine-wide interval stops start-up naming the key")
    func badValues() async throws {
        for (variable, value, key) in [
            ("HERALD_APP_LC_LIFECYCLE_STALE_DAYS", "-1", "app.lc.lifecycle.stale_days"),
            ("HERALD_APP_LC_LIFECYCLE_INVALID_DAYS", "soon", "app.lc.lifecycle.invalid_days"),
            ("HERALD_APP_ARGUS_LIFECYCLE_UNSEEN_DAYS", "3651", "app.argus.lifecycle.unseen_days"),
            ("HERALD_APP_ARGUS_LIFECYCLE_INTERVAL_HOURS", "1", "app.argus.lifecycle.interval_hours"),
            ("HERALD_ENGINE_CLEANUP_FAILING_DAYS", "x", "engine.cleanup.failing_days"),
        ] {
            var environment = Self.environment
            environment[variable] = value
            let error = await #expect(throws: HeraldError.self) {
                try await HeraldConfiguration.load(file: nil, environment: environment)
            }
            #expect(error?.code == "invalid_configuration", "\(variable)")
            #expect(error?.field == key, "\(variable)")
        }
    }

    @Test(
        "One clean-up job, two apps: ArgusAI's devices go 30 days inactive or 7 days failing; LeanCloud's turn invalid 60 days unopened, go 60 days invalid or 120 unopened",
        arguments: ["sqlite", "postgres"])
    func twoApps(_ storeKind: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cipher = Fixtures.cipher()
        var database: PostgresTestDatabase?
        let store: any HeraldStore
        if storeKind == "postgres" {
            let created = try await PostgresTestDatabase.create()
            database = created
            store = try PostgresStore.started(url: created.url, cipher: cipher)
        } else {
            store = try SQLiteStore(path: directory.file("herald.sqlite"), cipher: cipher)
        }
        try await store.migrate()
        let ca = try TestCertificateAuthority()
        let key = TestAPNsAuthKey()
        let apns = try await MockAPNsServer.start(ca: ca, credentials: [key.credential(topics: [EngineHarness.topic])])
        let apnsClient = try APNsClient(
            configuration: APNsConfiguration(
                environment: .custom(host: "127.0.0.1", port: apns.port),
                authentication: .token(try APNsSigningKey(teamID: key.teamID, keyID: key.keyID, pem: key.p8PEM)),
                trustRoots: [ca.rootCertificate], connections: 1))
        let transports = AppTransports([
            APNsTransport(production: apnsClient, sandbox: apnsClient, topic: EngineHarness.topic)
        ])
        var configuration = try await HeraldConfiguration.load(file: nil, environment: Self.environment)
        configuration.engine.retryPolicy = RetryPolicy(maxAttempts: 1)
        let clock = ManualClock()
        let dispatcher = Dispatcher(
            store: store, transports: ["argus": transports, "lc": transports], configuration: configuration.engine,
            now: { clock.date })
        let apps = try await AppDirectory(configuration: configuration, store: store, now: { clock.date })
        let router = try HeraldApplication.router(
            configuration: configuration, store: store, apps: apps, dispatcher: dispatcher, now: { clock.date }
        ).router
        let users = await UserTokenIssuer.hs256(secret: ServerHarness.jwtSecret)
        let start = clock.date

        func check() async throws {
            try await Application(router: router).test(.router) { client in
                let api = API(client: client)
                let leanCloud = LeanCloudClient(client: client, now: { clock.date })

                // Moves the clock to `days` after the start and runs the engine's clean-up job.
                func cleanUp(at days: Double) async throws {
                    clock.advance(by: .seconds(start.addingTimeInterval(days * Self.day).timeIntervalSince(clock.date)))
                    try await store.scheduleJob(kind: .cleanup, reference: "registry", runAt: clock.date)
                    let job = try #require(
                        try await store.claimJob(
                            kinds: [.cleanup], owner: "test", now: clock.date,
                            lockedUntil: clock.date.addingTimeInterval(60)))
                    try await dispatcher.process(job, owner: "test", isStopping: { false })
                }
                // The installation's `valid`, or nil when it is gone.
                func valid(_ id: String, key: String) async throws -> Bool? {
                    let response = try await api.call(.get, "/v1/installations/\(id)", bearer: key)
                    if response.status == .notFound { return nil }
                    #expect(response.status == .ok)
                    guard case .bool(let valid)? = response["valid"] else { throw TestFailure("no valid: \(response)") }
                    return valid
                }
                func argus(_ id: String) async throws -> Bool? { try await valid(id, key: Self.argusServerKey) }
                func lc(_ id: String) async throws -> Bool? { try await valid(id, key: Self.leanCloudServerKey) }
                // The LeanCloud app's installation saved (as the SDK does when the app opens).
                func save(_ token: String) async throws -> String {
                    let response = try await leanCloud.call(
                        .post, "/1.1/installations", auth: .appKey,
                        body: #"{"deviceType":"ios","deviceToken":"\#(token)","channels":["public"]}"#)
                    #expect(response.status == .created || response.status == .ok)
                    return try #require(response.string("objectId"))
                }
                // Pushes to installations of an app and delivers.
                func send(_ ids: [String], key: String) async throws {
                    let list = ids.map { "\"\($0)\"" }.joined(separator: ",")
                    let response = try await api.call(
                        .post, "/v1/notifications", bearer: key,
                        body: #"{"target":{"installation_ids":[\#(list)]},"payload":{"title":"Hi"}}"#)
                    #expect(response.status == .accepted)
                    _ = try await dispatcher.runDueJobs()
                }

                // ArgusAI: a device APNs answers 410 (registered natively: the dialect's own devices
                // are deleted at once, as its document's table says), one that fails five times,
                // and one that is never used.
                let argusToken = try await users.token(subject: "ann", now: clock.date)
                let goneToken = Fixtures.apnsToken()
                let aInactive = try #require(
                    try await api.call(
                        .post, "/v1/installations", bearer: Self.argusServerKey,
                        body: #"{"platform":"ios","token":"\#(goneToken)"}"#
                    ).string("id"))
                let failingToken = Fixtures.apnsToken()
                let aFailing = try await api.argusRegister(
                    ArgusAIHarness.registration(
                        deviceID: UUID().uuidString.lowercased(), token: failingToken, bundleID: EngineHarness.topic),
                    as: argusToken)
                let aQuiet = try await api.argusRegister(
                    ArgusAIHarness.registration(
                        deviceID: UUID().uuidString.lowercased(), token: Fixtures.apnsToken(),
                        bundleID: EngineHarness.topic),
                    as: argusToken)
                // LeanCloud: the same kinds of device, and three that are opened at different times.
                let lcGoneToken = Fixtures.apnsToken()
                let lcFailingToken = Fixtures.apnsToken()
                let openedToken = Fixtures.apnsToken()
                let reopenedToken = Fixtures.apnsToken()
                let lInvalid = try await save(lcGoneToken)
                let lFailing = try await save(lcFailingToken)
                let lUnopened = try await save(Fixtures.apnsToken())
                let lOpened = try await save(openedToken)
                let lReopened = try await save(reopenedToken)

                for token in [goneToken, lcGoneToken] {
                    apns.script(token: token, .unregistered(since: clock.date.addingTimeInterval(60)))
                }
                for token in [failingToken, lcFailingToken] {
                    apns.script(token: token, .error(status: 400, reason: "BadExpirationDate"))
                }
                for _ in 1...5 {
                    try await send([aInactive, aFailing], key: Self.argusServerKey)
                    try await send([lInvalid, lFailing], key: Self.leanCloudServerKey)
                    clock.advance(by: .seconds(1))
                }
                for id in [aInactive, aFailing] { #expect(try await argus(id) == false) }
                for id in [lInvalid, lFailing] { #expect(try await lc(id) == false) }

                // Day 6 and 8: ArgusAI's failing device goes after 7 days with no success; LeanCloud
                // has no such rule (its failing device is invalid, and waits its 60 days).
                try await cleanUp(at: 6)
                #expect(try await argus(aFailing) == false)
                try await cleanUp(at: 8)
                #expect(try await argus(aFailing) == nil)
                #expect(try await lc(lFailing) == false)

                // Day 29 and 31: ArgusAI's inactive device goes after 30 days; LeanCloud's stays.
                try await cleanUp(at: 29)
                #expect(try await argus(aInactive) == false)
                try await cleanUp(at: 31)
                #expect(try await argus(aInactive) == nil)
                #expect(try await lc(lInvalid) == false)

                // Day 50: one LeanCloud device is opened (the SDK saves its installation again).
                clock.advance(by: .seconds(start.addingTimeInterval(50 * Self.day).timeIntervalSince(clock.date)))
                #expect(try await save(openedToken) == lOpened)

                // Day 59 and 61: invalid for over 60 days → deleted; not opened for 60 days → valid=false.
                try await cleanUp(at: 59)
                for id in [lInvalid, lFailing] { #expect(try await lc(id) == false) }
                for id in [lUnopened, lOpened, lReopened] { #expect(try await lc(id) == true) }
                try await cleanUp(at: 61)
                for id in [lInvalid, lFailing] { #expect(try await lc(id) == nil) }
                for id in [lUnopened, lReopened] { #expect(try await lc(id) == false) }
                #expect(try await lc(lOpened) == true)
                let stale = try await leanCloud.call(.get, "/1.1/installations/\(lUnopened)", auth: .masterKey)
                #expect(stale["valid"] == .bool(false))

                // Day 70: opening the app makes the device valid again.
                clock.advance(by: .seconds(start.addingTimeInterval(70 * Self.day).timeIntervalSince(clock.date)))
                #expect(try await save(reopenedToken) == lReopened)
                #expect(try await lc(lReopened) == true)

                // Day 119 and 121: not opened for 120 days → deleted.
                try await cleanUp(at: 119)
                #expect(try await lc(lUnopened) == false)
                #expect(try await lc(lOpened) == false)  // 69 days since it was opened
                try await cleanUp(at: 121)
                #expect(try await lc(lUnopened) == nil)
                #expect(try await lc(lOpened) == false)
                #expect(try await lc(lReopened) == true)
                // ArgusAI's "not used in 90 days" is off unless configured: the unused device stays.
                #expect(try await argus(aQuiet) == true)
            }
        }
        do {
            try await check()
        } catch {
            await transports.shutdown()
            try? await apns.shutdown()
            await (store as? PostgresStore)?.close()
            try? await database?.drop()
            throw error
        }
        await transports.shutdown()
        try? await apns.shutdown()
        await (store as? PostgresStore)?.close()
        try await database?.drop()
    }
}
