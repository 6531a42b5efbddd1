import Foundation
import HeraldCore
import HeraldEngine
import Hummingbird

extension ArgusAIRoutes {
    /// `POST /api/v1/push/mobile/events` (server key): notifies the event's users' devices (or every
    /// device registered through the dialect) through the engine, once per `event_id`. `202` with the
    /// notification's id, status and the document's unified payload; a repeated `event_id` within the
    /// idempotency window sends nothing and answers `200` with the first notification's id.
    @Sendable func notifyEvent(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try context.requireServerKey("Events take the app's server key.")
        let event = try ArgusAIEvent(json: try await request.jsonBody(limit: maxBodyBytes), now: now())
        guard let baseURL = settings(appID).publicBaseURL else {
            throw HeraldError(
                kind: .unavailable, code: "not_configured",
                message: "Events need app.\(appID).argus.public_base_url for their thumbnail URLs.")
        }
        let result: SendResult
        do {
            result = try await dispatcher.submit(
                event.sendRequest(publicBaseURL: baseURL), appID: appID, idempotencyKey: "argus-event:\(event.eventID)")
        } catch let error as HeraldError where error.field?.hasPrefix("target.") == true {
            // The target is built from user_ids: name the event's field.
            throw HeraldError(
                kind: error.kind, code: error.code,
                message: error.message.replacingOccurrences(of: "target.", with: ""),
                field: error.field.map { String($0.dropFirst("target.".count)) })
        }
        guard case .accepted(let notification, let created) = result else {
            throw HeraldError.internal("An event is never a dry run.")
        }
        return .json(
            .object([
                "notification_id": .string(notification.id),
                "status": .string(notification.status.rawValue),
                "event_id": .string(event.eventID),
                "notification": event.unified,
            ]),
            status: created ? .accepted : .ok)
    }
}
