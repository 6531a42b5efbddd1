import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird

extension ArgusAIRoutes {
    /// The status an event gets: ArgusAI's server sends events its detector has already classified.
    package static let eventStatus = "detected"

    /// `POST /api/v1/push/mobile/events` (server key): stores the event and notifies its users'
    /// devices (or every device registered through the dialect), event and notification committed
    /// together (``EventIntake``). `202` with the notification's id, status and the document's
    /// unified payload; a repeated `event_id` sends nothing and answers `200` with the first
    /// notification's id.
    @Sendable package func notifyEvent(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try context.requireServerKey("Events take the app's server key.")
        let now = self.now()
        let event = try ArgusAIEvent(json: try await request.jsonBody(limit: maxBodyBytes), now: now)
        guard let baseURL = settings(appID).publicBaseURL else {
            throw HeraldError(
                kind: .unavailable, code: "not_configured",
                message: "Events need app.\(appID).argus.public_base_url for their thumbnail URLs.")
        }
        let record = SourceEvent(
            id: Identifier.make(now: now), appID: appID, producer: Self.settingsKey, externalID: event.eventID,
            sourceDeviceID: event.cameraID,
            type: event.detectionType, summary: event.description, thumbnail: event.thumbnailPath,
            status: Self.eventStatus, occurredAt: event.timestamp, createdAt: now)
        let request = event.sendRequest(publicBaseURL: baseURL)
        let accepted = try await EventIntake(dispatcher: dispatcher, store: store).accept(
            record, onlyWithAudience: false, notify: { _ in request })
        guard let notificationID = accepted.event.notificationID else {
            throw HeraldError.internal("An ArgusAI event always has a notification.")
        }
        // Clean-up removes only finished notifications: an event whose notification is gone was done.
        let status = accepted.notification?.status ?? .done
        return .json(
            .object([
                "notification_id": .string(notificationID),
                "status": .string(status.rawValue),
                "event_id": .string(event.eventID),
                "notification": event.unified,
            ]),
            status: accepted.created ? .accepted : .ok)
    }
}
