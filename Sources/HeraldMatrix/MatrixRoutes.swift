import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging
import NIOCore

/// Herald as a Matrix push gateway (the Matrix specification's Push Gateway API, what Sygnal
/// serves): a homeserver's HTTP pusher POSTs `/_matrix/push/v1/notify` with an event (or a badge
/// update) and the user's devices; each device's `app_id` names a Herald app and route
/// (`app.<id>.matrix.app_ids`) and its `pushkey` is the device's APNs or FCM token, registered like
/// any installation or on first use. Each device's push is queued with the engine (durable,
/// retried, recorded) and the answer comes at once: `rejected` lists the pushkeys Herald knows
/// are dead (an app id no app serves, a token the provider refused), so the homeserver deletes
/// those pushers. There is no credential: the pushkey is the device's, as with Sygnal.
package struct MatrixRoutes: Dialect {
    package static let settingsKey = "matrix"
    package static let name = "Matrix push gateway"
    package static let settingsTitle = "Matrix push gateway"
    package static var declaredSettings: [any DeclaredSetting] { MatrixConfiguration.Settings.all }
    package static var routesSummary: String { path }
    /// The `source` of the notifications it sends.
    package static let source = "matrix"
    package static let path = "/_matrix/push/v1/notify"

    package let store: any HeraldStore
    package let dispatcher: Dispatcher
    /// Each Matrix app id served: the Herald app (the first in id order, when two list it), its
    /// route and the app's settings.
    package let routes: [String: (appID: String, route: MatrixConfiguration.Route, settings: MatrixConfiguration)]
    package let maxBodyBytes: Int
    package let now: @Sendable () -> Date

    package init(context: DialectContext, settings: [String: MatrixConfiguration]) {
        store = context.store
        dispatcher = context.dispatcher
        var routes: [String: (appID: String, route: MatrixConfiguration.Route, settings: MatrixConfiguration)] = [:]
        for (appID, app) in settings.sorted(by: { $0.key < $1.key }) {
            for (matrixAppID, route) in app.appIDs where routes[matrixAppID] == nil {
                routes[matrixAppID] = (appID, route, app)
            }
        }
        self.routes = routes
        maxBodyBytes = context.maxBodyBytes
        now = context.now
    }

    package static func status(_ settings: MatrixConfiguration?) -> (enabled: Bool, detail: String) {
        guard let settings, !settings.appIDs.isEmpty else { return (false, "no Matrix app ids") }
        return (
            true,
            settings.appIDs.sorted { $0.key < $1.key }.map { "\($0.key) → \($0.value.rawValue)" }
                .joined(separator: ", ")
        )
    }

    package func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        table.on(router.group(), prefix: "", Self.notifyOperation, use: notify)
    }

    /// `POST /_matrix/push/v1/notify`: queues a push for each device and answers the pushkeys to drop.
    @Sendable package func notify(_ request: Request, context: HeraldRequestContext) async -> Response {
        do {
            let notification = try await Self.read(request, limit: maxBodyBytes)
            let address = context.clientAddress
            var rejected: [String] = []
            for device in notification.devices {
                guard let (appID, route, settings) = routes[device.appID] else {
                    context.logger.info(
                        "matrix pushkey rejected: no app serves its app id",
                        metadata: ["herald.matrix_app_id": "\(device.appID)"])
                    rejected.append(device.pushkey)
                    continue
                }
                guard
                    let installation = try await installation(
                        for: device, appID: appID, route: route, settings: settings, address: address,
                        logger: context.logger)
                else {
                    rejected.append(device.pushkey)
                    continue
                }
                try await send(notification, to: device, of: installation, route: route, logger: context.logger)
            }
            let answer = JSONValue.object(["rejected": .array(rejected.map(JSONValue.string))])
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.serialized())))
        } catch {
            let failure = error as? MatrixError ?? .unavailable("Herald could not queue the notification; retry later.")
            var metadata: Logger.Metadata = ["herald.error": "\(failure.errcode)"]
            if !(error is MatrixError) { metadata["herald.cause"] = "\(type(of: error))" }
            context.logger.info("matrix notify refused", metadata: metadata)
            return failure.response()
        }
    }

    /// The body as a notify request.
    /// - Throws: `MatrixError` for a body too large, not JSON, or not a notify.
    static func read(_ request: Request, limit: Int) async throws -> MatrixNotification {
        var bytes: [UInt8] = []
        for try await buffer in request.body {
            guard bytes.count + buffer.readableBytes <= limit else { throw MatrixError.tooLarge(limit: limit) }
            bytes.append(contentsOf: buffer.readableBytesView)
        }
        let json: JSONValue
        do throws(HeraldError) {
            json = try JSONValue.parse(bytes)
        } catch {
            throw MatrixError.notJSON()
        }
        return try MatrixNotification(parsing: json)
    }

    /// The installation a device's pushkey names in its app: the valid one registered with it, or
    /// one registered now (a new pushkey, within the address's allowance). Nil when Herald knows
    /// the pushkey is dead: only invalidated installations hold it, or it cannot be a token of the
    /// route.
    /// - Throws: `MatrixError` `M_LIMIT_EXCEEDED` past the allowance; the store's errors.
    private func installation(
        for device: MatrixNotification.Device, appID: String, route: MatrixConfiguration.Route,
        settings: MatrixConfiguration, address: String, logger: Logger
    ) async throws -> Installation? {
        if let known = try await store.installation(appID: appID, service: route.service, token: device.pushkey) {
            if !known.valid {
                logger.info(
                    "matrix pushkey rejected: its token was refused by the provider",
                    metadata: [
                        "herald.installation": "\(known.id)", "herald.token": "\(SecretFingerprint.of(device.pushkey))",
                    ])
            }
            return known.valid ? known : nil
        }
        do throws(HeraldError) {
            try InstallationRules.validateDeviceToken(device.pushkey, service: route.service, platform: route.platform)
        } catch {
            logger.info(
                "matrix pushkey rejected: not a token of its route",
                metadata: [
                    "herald.route": "\(route.rawValue)", "herald.token": "\(SecretFingerprint.of(device.pushkey))",
                ])
            return nil
        }
        guard settings.newPushkeysPerMinute > 0 else { return nil }
        let decision = try await store.acquireToken(
            bucket: "matrix-new-pushkeys:\(appID):address:\(address)", capacity: settings.newPushkeysPerMinute,
            per: 60, now: now())
        if case .limited(let retryAfter) = decision { throw MatrixError.limitExceeded(retryAfter: retryAfter) }
        let registration = InstallationRegistration(
            platform: route.platform, service: route.service, environment: route.environment,
            token: .device(device.pushkey),
            profile: InstallationProfile(attributes: ["matrix_app_id": .string(device.appID)]))
        let installation = try await dispatcher.registrations.register(registration, appID: appID, now: now())
            .installation
        logger.info(
            "matrix pushkey registered",
            metadata: [
                "herald.installation": "\(installation.id)", "herald.app": "\(appID)",
                "herald.token": "\(SecretFingerprint.of(device.pushkey))",
            ])
        return installation
    }

    /// Queues the device's push with the engine.
    private func send(
        _ notification: MatrixNotification, to device: MatrixNotification.Device, of installation: Installation,
        route: MatrixConfiguration.Route, logger: Logger
    ) async throws {
        var request = SendRequest(
            target: NotificationTarget(
                audience: .installationIDs([installation.id]), services: [installation.service]),
            payload: notification.payload(for: device, route: route), source: Self.source, respectPreferences: false)
        request.dialect = Self.settingsKey
        // Read just now by its pushkey: the worker sends to it without reading it again.
        request.knownAddresses = [InstallationAddress(installation)]
        do {
            guard case .accepted(let accepted, _) = try await dispatcher.submit(request, appID: installation.appID)
            else { return }
            logger.debug(
                "matrix push queued",
                metadata: [
                    "herald.notification": "\(accepted.id)", "herald.installation": "\(installation.id)",
                    "herald.matrix_event": "\(notification.eventID ?? "-")",
                ])
        } catch let error as HeraldError where error.kind == .badRequest || error.kind == .payloadTooLarge {
            // The event cannot be rendered for this device (too large); the pushkey itself is fine.
            logger.warning(
                "matrix push not sent",
                metadata: ["herald.installation": "\(installation.id)", "herald.cause": "\(error.code)"])
        }
    }
}
