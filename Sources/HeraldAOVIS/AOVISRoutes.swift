import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import HummingbirdAuth
import Logging

/// The AOVIS dialect (`seeds/000`, the AOVIS Mobile Push Integration Guide): the app's
/// `POST /api/internal/push/register` with its documented bodies, and, for AOVIS's backend (server
/// key), camera devices, their owners and classified camera events that notify the owners.
///
/// Registration is a native registration (same rules, same upsert); an event is a native
/// notification to the owners' users, sent by the engine. Nothing here keeps a rule of its own
/// but the guide's: token length, defaults, ownership of `deviceId`, the push template.
package struct AOVISRoutes: Dialect {
    package static let settingsKey = "aovis"

    package static let prefix = "/api/internal"
    /// The status AOVIS gives an event its classifier has labelled.
    package static let classified = "classified"
    /// The installation attribute that keeps the camera a push token was registered against (the
    /// token's own `device_id` is the phone's, never the camera's).
    package static let sourceDeviceAttribute = "source_device_id"

    package let store: any DispatchStore & EventStore
    package let apps: AppDirectory
    package let dispatcher: Dispatcher
    package let settings: [String: AOVISConfiguration]
    /// The users' allowance of registrations (`app.<id>.registrations_per_minute`).
    package let limit: RegistrationLimit
    package let maxBodyBytes: Int
    package let now: @Sendable () -> Date

    package init(context: DialectContext, settings: [String: AOVISConfiguration]) {
        store = context.store
        limit = RegistrationLimit(perMinute: context.registrationsPerMinute, store: context.store)
        apps = context.apps
        dispatcher = context.dispatcher
        self.settings = settings
        maxBodyBytes = context.maxBodyBytes
        now = context.now
    }

    package func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        // The app's route authenticates itself, to answer the guide's 401 body.
        let app = router.group("api/internal")
        table.on(app, prefix: Self.prefix, Self.registerOperation, use: registerToken)
        let backend = router.group("api/internal").add(middleware: BearerAuthenticator(apps: apps))
        table.on(backend, prefix: Self.prefix, Self.createDeviceOperation, use: createDevice)
        table.on(backend, prefix: Self.prefix, Self.readDeviceOperation, use: readDevice)
        table.on(backend, prefix: Self.prefix, Self.setOwnerOperation, use: setOwner)
        table.on(backend, prefix: Self.prefix, Self.intakeEventOperation, use: intakeEvent)
        table.on(backend, prefix: Self.prefix, Self.readEventOperation, use: readEvent)
    }

    // MARK: The app's route

    /// `POST /api/internal/push/register`: `200 {"success": true, "push_token_id": …}`, the same id
    /// for the same (user, platform, token); failures answer the guide's bodies, never the native shape.
    @Sendable package func registerToken(_ request: Request, context: HeraldRequestContext) async -> Response {
        do {
            let (appID, userID) = try await session(request)
            if let retryAfter = try await limit.spend(appID: appID, by: .user(userID), now: now()) {
                var response = AOVISFailure.rateLimited.response
                response.headers[.retryAfter] = String(retryAfter)
                return response
            }
            let parsed = try AOVISRegistration(
                json: try await request.jsonBody(limit: maxBodyBytes),
                apnsEnvironment: settings[appID]?.apnsEnvironment ?? .production,
                throughSNS: settings[appID]?.deliverThroughSNS ?? false)
            var camera: SourceDevice?
            if let reference = parsed.deviceReference {
                camera = try await ownedDevice(reference, appID: appID, userID: userID)
            }
            var registration = parsed.registration
            registration.userID = userID
            let now = self.now()
            var installation = try await dispatcher.registrations.register(registration, appID: appID, now: now)
                .installation
            if let camera, installation.attributes[Self.sourceDeviceAttribute] != .string(camera.id) {
                let registered = installation
                installation.attributes[Self.sourceDeviceAttribute] = .string(camera.id)
                try InstallationRules.validateAttributes(installation.attributes)
                guard let updated = try await dispatcher.registrations.update(installation, from: registered, now: now)
                else { throw AOVISFailure.internalError }
                installation = updated
            }
            context.logger.info(
                "aovis push token registered",
                metadata: [
                    "herald.installation": "\(installation.id)",
                    "herald.token": "\(SecretFingerprint.of(installation.token.identity))",
                ])
            return .json(.object(["success": .bool(true), "push_token_id": .string(installation.id)]))
        } catch {
            return AOVISFailure.response(for: error, logger: context.logger)
        }
    }

    /// The app and user of the request's app token (a user JWT).
    private func session(_ request: Request) async throws(AOVISFailure) -> (appID: String, userID: String) {
        guard let bearer = request.headers.bearer?.token, !bearer.isEmpty,
            case .user(let appID, let userID)? = try? await apps.authenticate(
                bearer: bearer, appHint: request.headers[.heraldApp])
        else { throw .invalidSession }
        return (appID, userID)
    }

    /// The camera `reference` names (id or alias), if the user owns it with ACTIVE status.
    private func ownedDevice(_ reference: String, appID: String, userID: String) async throws -> SourceDevice {
        guard let device = try await store.sourceDevice(appID: appID, reference: reference),
            try await store.ownership(appID: appID, deviceID: device.id, userID: userID)?.status == .active
        else { throw AOVISFailure.invalidBody }
        return device
    }

    // MARK: The backend's routes

    /// `POST /api/internal/devices`: `201` with the new camera.
    @Sendable package func createDevice(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        try body.rejectUnknown(allowed: ["id", "alias", "name"])
        let id = try body.string("id", maxLength: SourceDevice.maxReferenceLength)
        let alias = try body.string("alias", maxLength: SourceDevice.maxReferenceLength)
        for (field, value) in [("id", id), ("alias", alias)] {
            if let value, !SourceDevice.isValidReference(value) {
                throw HeraldError.invalidValue(
                    field, "Field '\(field)' must be 1 to 100 printable ASCII characters without spaces.")
            }
        }
        let now = self.now()
        let device = try await store.insertSourceDevice(
            SourceDevice(
                id: id ?? Identifier.make(now: now), appID: appID, alias: alias,
                name: try body.string("name", maxLength: SourceDevice.maxNameLength), createdAt: now, updatedAt: now))
        context.logger.info("source device created", metadata: ["herald.source_device": "\(device.id)"])
        return .json(AOVISView.json(device, owners: []), status: .created)
    }

    /// `GET /api/internal/devices/{id}` (id or alias): the camera and its owners.
    @Sendable package func readDevice(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let device = try await device(context, appID: appID)
        return .json(AOVISView.json(device, owners: try await store.ownerships(appID: appID, deviceID: device.id)))
    }

    /// `PUT /api/internal/devices/{id}/owners/{user_id}` with `{"status": "ACTIVE" | "REVOKED"}`.
    @Sendable package func setOwner(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        try body.rejectUnknown(allowed: ["status"])
        guard let status = try body.enumeration("status", as: Ownership.Status.self) else {
            throw HeraldError.missingField("status")
        }
        let device = try await device(context, appID: appID)
        guard let userID = context.parameters.get("user_id"), userID.count <= InstallationRules.maxShortText else {
            throw HeraldError.notFound("User")
        }
        let now = self.now()
        guard
            let stored = try await store.setOwnership(
                Ownership(
                    appID: appID, deviceID: device.id, userID: userID, status: status, createdAt: now, updatedAt: now))
        else { throw HeraldError.notFound("Device") }
        context.logger.info(
            "source device ownership set",
            metadata: ["herald.source_device": "\(device.id)", "herald.status": "\(status.rawValue)"])
        return .json(AOVISView.json(stored))
    }

    /// `POST /api/internal/events`: stores a classified camera event and notifies the camera's
    /// active owners; `201` with the event, or `200` with the first one for a repeated `eventId`.
    /// The event and its notification are committed together (``EventIntake``); without owners, or
    /// owners without a deliverable installation, there is nothing to send and the event stays unsent.
    @Sendable package func intakeEvent(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let intake = try AOVISEventIntake(json: try await request.jsonBody(limit: maxBodyBytes))
        guard let device = try await store.sourceDevice(appID: appID, reference: intake.deviceReference) else {
            throw HeraldError.invalidValue("deviceId", code: "unknown_device", "No device has this id or alias.")
        }
        let now = self.now()
        let event = SourceEvent(
            id: Identifier.make(now: now), appID: appID, producer: Self.settingsKey, externalID: intake.eventID,
            recordID: intake.cloudEventID,
            sourceDeviceID: device.id, type: intake.type.rawValue, summary: intake.summary,
            thumbnail: intake.thumbnail, status: Self.classified, occurredAt: intake.occurredAt, createdAt: now)
        let accepted = try await EventIntake(dispatcher: dispatcher, store: store).accept(event, onlyWithAudience: true)
        { stored in
            stored.owners.isEmpty
                ? nil : AOVISPushTemplate(event: stored, type: intake.type, device: device).sendRequest
        }
        context.logger.debug(
            "camera event received",
            metadata: [
                "herald.event": "\(accepted.event.id)", "herald.created": "\(accepted.created)",
                "herald.notification": "\(accepted.event.notificationID ?? "none")",
            ])
        return .json(AOVISView.json(accepted.event, device: device), status: accepted.created ? .created : .ok)
    }

    /// `GET /api/internal/events/{id}` (the CloudEvent id or Herald's): the event with `pushSent`
    /// and `pushSentAt`.
    @Sendable package func readEvent(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        guard let id = context.parameters.get("id"), id.utf8.count <= SourceEvent.maxProducerIDLength,
            let event = try await store.event(appID: appID, producer: Self.settingsKey, id: id)
        else { throw HeraldError.notFound("Event") }
        let device = try await store.sourceDevice(appID: appID, reference: event.sourceDeviceID)
        return .json(AOVISView.json(event, device: device))
    }

    /// The camera named in the path by id or alias.
    private func device(_ context: HeraldRequestContext, appID: String) async throws -> SourceDevice {
        guard let reference = context.parameters.get("id"), SourceDevice.isValidReference(reference),
            let device = try await store.sourceDevice(appID: appID, reference: reference)
        else { throw HeraldError.notFound("Device") }
        return device
    }

    /// AOVIS's backend routes take the server key.
    package static func server(_ context: HeraldRequestContext) throws(HeraldError) -> String {
        try context.requireServerKey("Managing devices and events takes the app's server key.")
    }
}

extension AOVISRoutes {
    /// The register route answers `429 {"error":"rate_limited"}`; the backend routes answer natively.
    package static func tooManyRefusedCredentials(path: String, retryAfter: Int) -> Response? {
        path == prefix + "/push/register" ? AOVISFailure.rateLimited.response : nil
    }
}

extension AOVISRoutes {
    package static let name = "AOVIS"
    package static let settingsTitle = "AOVIS dialect"
    package static var declaredSettings: [any DeclaredSetting] { AOVISConfiguration.Settings.all }
    package static var routesSummary: String { Self.prefix + "/…" }

    package static func status(_ settings: AOVISConfiguration?) -> (enabled: Bool, detail: String) {
        let aovis = settings ?? AOVISConfiguration()
        return (
            true,
            "delivery \(aovis.deliverThroughSNS ? "through SNS" : "direct"), APNs \(aovis.apnsEnvironment.rawValue)"
        )
    }
}
