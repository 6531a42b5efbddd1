import CoreMetrics
import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The Home Assistant push relay (docs/architecture.md, "Adding a dialect"): Herald as the `push_url` of a `mobile_app`
/// registration. Home Assistant POSTs `{message, title?, push_token, registration_info, data?}` with
/// no credential; the push token names the device: an installation of an app that turns the relay
/// on (`app.<id>.home_assistant.relay`), or, as the document's relay forwards any token, one Herald
/// registers from the request (``adopt(_:address:logger:)``) unless the app keeps a closed relay
/// (`registered_only`).
/// The notification goes through the engine like any other (durable, retried, recorded), rendered
/// as the Companion apps expect (``HomeAssistantCompanionPayload``), and the answer is `201` with
/// the token's `rateLimits` for the UTC day, or Home Assistant's error body.
package struct HomeAssistantRelayRoutes: Dialect {
    package static let settingsKey = "home_assistant"
    package static let prefix = "/ha/push"
    /// The `source` of the notifications the relay sends.
    package static let source = "home_assistant"
    /// The `source` of the Companion commands it sends (they are not counted).
    package static let commandSource = "home_assistant_command"

    package let store: any HeraldStore & RelayUsageStore
    package let dispatcher: Dispatcher
    /// The relay apps' settings, replaced by a reload.
    let settings: HomeAssistantRelaySettings
    package let maxBodyBytes: Int
    package let now: @Sendable () -> Date

    /// The apps that enable the relay, in id order, with their settings.
    package var apps: [(id: String, settings: HomeAssistantRelayConfiguration)] { settings.apps }

    package init(context: DialectContext, settings: [String: HomeAssistantRelayConfiguration]) throws {
        store = try context.store((any HeraldStore & RelayUsageStore).self, for: Self.self)
        dispatcher = context.dispatcher
        self.settings = HomeAssistantRelaySettings(settings)
        maxBodyBytes = context.maxBodyBytes
        now = context.now
        let outcomes = HomeAssistantRelayOutcomes(store: store, dispatcher: dispatcher, now: now)
        for source in [Self.source, Self.commandSource] {
            dispatcher.observeCommits(source: source) { notification, counts in
                await outcomes.record(notification, counts)
            }
        }
        let reload = HomeAssistantRelayReload(store: store, settings: self.settings, now: now)
        context.apps.onReload(Self.settingsKey) { change in await reload.apply(change) }
    }

    package func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        table.on(router.group(), prefix: "", Self.pushOperation, use: push)
        table.on(router.group(), prefix: "", Self.rateLimitsOperation, use: rateLimits)
    }

    /// A device found by its push token.
    package struct Match {
        package var installation: Installation
        package var settings: HomeAssistantRelayConfiguration
        /// The installation is invalidated and this push is its paced retry: it goes to the token
        /// itself (the installation stays invalidated), and a delivery revives the installation.
        package var retry = false
    }

    /// `POST /ha/push`: relays one notification.
    @Sendable package func push(_ request: Request, context: HeraldRequestContext) async -> Response {
        do {
            let body = try await Self.json(request, limit: maxBodyBytes)
            let push: HomeAssistantPushRequest
            do throws(HeraldError) {
                push = try HomeAssistantPushRequest(parsing: body)
            } catch {
                throw HomeAssistantRelayFailure.invalidRequest(error)
            }
            let address = context.clientAddress
            var match: Match
            if let known = try await known(push.pushToken) {
                match = known
            } else {
                match = try await adopt(push, address: address, logger: context.logger)
            }
            let installation = match.installation
            var payload: NotificationPayload
            do throws(HeraldError) {
                payload = try HomeAssistantCompanionPayload.payload(for: push, platform: installation.platform)
            } catch {
                throw HomeAssistantRelayFailure.invalidRequest(error)
            }
            if !installation.valid {
                // The provider invalidated the token: it is pushed to again once its retry is due.
                guard try await claimRetry(installation, settings: match.settings) else {
                    throw HomeAssistantRelayFailure.invalidatedToken()
                }
                match.retry = true
                context.logger.info(
                    "home assistant push retries an invalidated token",
                    metadata: [
                        "herald.installation": "\(installation.id)", "herald.app": "\(installation.appID)",
                        "herald.token": "\(SecretFingerprint.of(push.pushToken))",
                    ])
            }
            // Companion commands (location updates, clearing, widget refreshes) neither count nor
            // stop at the limit, as in Home Assistant's own relay: they keep the app working.
            let command = HomeAssistantCompanionPayload.isCommand(push.message)
            let day = UTCDay(now())
            func limits(_ usage: RelayUsage) -> HomeAssistantRateLimits {
                HomeAssistantRateLimits(usage: usage, maximum: match.settings.maximumPerDay, resetsAt: day.end)
            }
            func countError(releasing: Bool) async throws -> RelayUsage {
                try await store.countRelayError(
                    appID: installation.appID, service: installation.service, token: push.pushToken, day: day.key,
                    releasingClaim: releasing)
            }
            if let problem = dispatcher.configurationProblem(for: installation) {
                if !command { _ = try await countError(releasing: false) }
                throw HomeAssistantRelayFailure.providerMisconfigured(problem, appID: installation.appID)
            }
            let claim: (granted: Bool, usage: RelayUsage)
            if command {
                claim = (
                    true,
                    try await store.relayUsage(
                        appID: installation.appID, service: installation.service, token: push.pushToken,
                        day: day.key)
                )
            } else {
                claim = try await store.claimRelaySend(
                    appID: installation.appID, service: installation.service, token: push.pushToken, day: day.key,
                    maximum: match.settings.maximumPerDay)
            }
            guard claim.granted else {
                throw HomeAssistantRelayFailure.rateLimited(target: push.pushToken, rateLimits: limits(claim.usage))
            }
            let target: NotificationTarget
            if match.retry {
                target = Self.retryTarget(installation, token: push.pushToken, payload: &payload)
            } else {
                // The device's service only: the payload is checked against its provider's limit alone.
                target = NotificationTarget(
                    audience: .installationIDs([installation.id]), services: [installation.service])
            }
            var send = SendRequest(
                target: target, payload: payload, source: command ? Self.commandSource : Self.source,
                respectPreferences: false)
            send.dialect = Self.settingsKey
            let notification: PushNotification
            do {
                guard case .accepted(let accepted, _) = try await dispatcher.submit(send, appID: installation.appID)
                else { throw HeraldError.internal("The engine answered a send with a dry run.") }
                notification = accepted
            } catch {
                if !command { _ = try await countError(releasing: true) }
                throw Self.failure(error)
            }
            Counter(label: "herald_relay_pushes_total", dimensions: [("result", "accepted")]).increment()
            context.logger.debug(
                "home assistant push relayed",
                metadata: [
                    "herald.notification": "\(notification.id)", "herald.app": "\(installation.appID)",
                    "herald.token": "\(SecretFingerprint.of(push.pushToken))",
                ])
            return Self.json(
                status: .created,
                .object([
                    "messageId": .string(notification.id), "sentPayload": payload.json,
                    "target": .string(push.pushToken), "rateLimits": limits(claim.usage).json,
                ]))
        } catch {
            return Self.refusal(error, context: context)
        }
    }

    /// `POST /ha/push/rate_limits`: the token's counters of the day, sending nothing.
    @Sendable package func rateLimits(_ request: Request, context: HeraldRequestContext) async -> Response {
        do {
            let body = try await Self.json(request, limit: maxBodyBytes)
            let token: String
            do throws(HeraldError) {
                token = try HomeAssistantPushRequest.token(parsing: body)
            } catch {
                throw HomeAssistantRelayFailure.invalidRequest(error)
            }
            let match = try await device(token)
            guard match.installation.valid else { throw HomeAssistantRelayFailure.invalidatedToken() }
            let day = UTCDay(now())
            let usage = try await store.relayUsage(
                appID: match.installation.appID, service: match.installation.service, token: token, day: day.key)
            let limits = HomeAssistantRateLimits(usage: usage, maximum: match.settings.maximumPerDay, resetsAt: day.end)
            return Self.json(status: .ok, .object(["target": .string(token), "rateLimits": limits.json]))
        } catch {
            return Self.refusal(error, context: context)
        }
    }

    /// The installation holding `token` in a relay-enabled app, found through the token index: one
    /// keyed-hash probe per app and plausible service (APNs tokens are hex, FCM's are not only; SNS
    /// holds either), never a scan.
    /// - Throws: `HomeAssistantRelayFailure` for an unknown token.
    package func device(_ token: String) async throws -> Match {
        guard let match = try await known(token) else { throw HomeAssistantRelayFailure.unknownToken() }
        return match
    }

    /// The installation holding `token` in a relay-enabled app, a valid one first; nil when no app
    /// has it. An invalidated one is pushed to again only when its retry is due (``claimRetry(_:settings:)``).
    package func known(_ token: String) async throws -> Match? {
        var services: [PushService] = []
        if (try? InstallationRules.validateAPNsToken(token)) != nil { services.append(.apns) }
        if (try? InstallationRules.validateFCMToken(token)) != nil { services.append(.fcm) }
        // Tokens registered for delivery through AWS SNS (AOVIS's `delivery: sns`) are the same tokens.
        if !services.isEmpty { services.append(.sns) }
        var invalidated: Match?
        for app in apps {
            for service in services {
                guard let installation = try await store.installation(appID: app.id, service: service, token: token)
                else { continue }
                if installation.valid { return Match(installation: installation, settings: app.settings) }
                if invalidated == nil { invalidated = Match(installation: installation, settings: app.settings) }
            }
        }
        return invalidated
    }

    /// Claims the paced retry of an invalidated installation (`home_assistant.invalid_retry_hours`
    /// after its invalidation, then after each retry; at once after a reload), shared by every node
    /// through the store. Tokens delivered through SNS are not retried (their endpoint is the SNS
    /// platform application's).
    func claimRetry(_ installation: Installation, settings: HomeAssistantRelayConfiguration) async throws -> Bool {
        guard settings.invalidRetryHours > 0, installation.service != .sns,
            case .device(let token) = installation.token
        else { return false }
        return try await store.claimRelayRetry(
            appID: installation.appID, service: installation.service, token: token,
            invalidatedAt: installation.invalidatedAt, interval: TimeInterval(settings.invalidRetryHours) * 3600,
            now: now())
    }

    /// The target of an invalidated installation's retry: its token itself, so the engine's answer
    /// leaves the installation as it is (a refusal does not invalidate it again, which would restart
    /// its clean-up). An APNs push carries the installation's bundle id as its topic, as the
    /// installation's own pushes do.
    static func retryTarget(
        _ installation: Installation, token: String, payload: inout NotificationPayload
    ) -> NotificationTarget {
        if installation.service == .apns, let bundleID = installation.bundleID {
            var apns = payload.overrides["apns"]?.objectValue ?? [:]
            var headers = apns["headers"]?.objectValue ?? [:]
            if headers["apns-topic"] == nil { headers["apns-topic"] = .string(bundleID) }
            apns["headers"] = .object(headers)
            payload.overrides["apns"] = .object(apns)
        }
        return NotificationTarget(
            audience: .tokens([
                NotificationTarget.RawToken(
                    token: token, service: installation.service, environment: installation.environment,
                    platform: installation.platform)
            ]), services: [installation.service])
    }

    /// The relay failure for an error of the engine.
    package static func failure(_ error: any Error) -> HomeAssistantRelayFailure {
        guard let error = error as? HeraldError else { return .providerUnavailable("the database is unavailable") }
        switch error.kind {
        case _ where error.code == "payload_too_large", .payloadTooLarge: return .payloadTooLarge(error)
        case .badRequest: return .invalidRequest(error)
        case .unavailable, .tooManyRequests: return .providerUnavailable(error.message)
        default: return .internalError()
        }
    }

    /// The answer to a refused request, logged without the token.
    package static func refusal(_ error: any Error, context: HeraldRequestContext) -> Response {
        let failure = error as? HomeAssistantRelayFailure ?? Self.failure(error)
        Counter(
            label: "herald_relay_pushes_total",
            dimensions: [("result", failure.status == .tooManyRequests ? "rate_limited" : "refused")]
        ).increment()
        var metadata: Logger.Metadata = ["herald.error": "\(failure.errorType)"]
        if let error = error as? HeraldError { metadata["herald.cause"] = "\(error.code)" }
        if failure.status.code >= 500 {
            if !(error is HomeAssistantRelayFailure) { metadata["herald.cause"] = "\(type(of: error))" }
            context.logger.error("home assistant push refused", metadata: metadata)
        } else {
            context.logger.info("home assistant push refused", metadata: metadata)
        }
        return failure.response()
    }

    /// The request body as JSON, at most `limit` bytes.
    /// - Throws: `HomeAssistantRelayFailure` for a body too large or not JSON.
    package static func json(_ request: Request, limit: Int) async throws -> JSONValue {
        var bytes: [UInt8] = []
        for try await buffer in request.body {
            guard bytes.count + buffer.readableBytes <= limit else {
                throw HomeAssistantRelayFailure.bodyTooLarge(limit: limit)
            }
            bytes.append(contentsOf: buffer.readableBytesView)
        }
        do throws(HeraldError) {
            return try JSONValue.parse(bytes)
        } catch {
            throw HomeAssistantRelayFailure.invalidRequest(error)
        }
    }

    /// A JSON answer (`application/json`), as every relay answer is: Home Assistant parses the body
    /// before it looks at the status.
    package static func json(status: HTTPResponse.Status, _ value: JSONValue) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serialized())))
    }
}

extension HomeAssistantRelayRoutes {
    /// The push token is the relay's credential: an unknown one (`404 UnknownToken`) is refused.
    package static func refusesCredentials(path: String, status: HTTPResponse.Status) -> Bool {
        path.hasPrefix(prefix) && status == .notFound
    }

    /// `429 RateLimited` without `rateLimits` (they are a token's, and no token is looked at).
    package static func tooManyRefusedCredentials(path: String, retryAfter: Int) -> Response? {
        guard path.hasPrefix(prefix) else { return nil }
        return HomeAssistantRelayFailure(
            status: .tooManyRequests, errorType: "RateLimited",
            errorMessage: "Too many unknown push tokens from this address",
            message:
                "Herald refused too many requests with unknown push tokens from this address. It accepts them again "
                + "in \(retryAfter) seconds."
        ).response()
    }
}

extension HomeAssistantRelayRoutes {
    package static let name = "Home Assistant"
    package static let settingsTitle = "Home Assistant push relay"
    package static var declaredSettings: [any DeclaredSetting] { HomeAssistantRelayConfiguration.Settings.all }
    package static var routesSummary: String { Self.prefix }

    package static func status(_ settings: HomeAssistantRelayConfiguration?) -> (enabled: Bool, detail: String) {
        let relay = settings ?? HomeAssistantRelayConfiguration()
        return (relay.relay, relay.relay ? "relay on, \(relay.maximumPerDay) per token per day" : "relay off")
    }
}
