import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging

// ntfy's updating and deleting of notifications (docs/dialects/ntfy.md, "Updating and deleting"):
// a message published with a sequence id is an updatable notification; a later message of the
// same sequence changes it (its next revision), and clearing or deleting the sequence removes it
// from the devices. A sequence is found by the idempotency key its first message was stored with,
// `ntfy-sequence:<topic>/<sequence id>#<generation>`: a deleted sequence published to again starts
// the next generation, as ntfy's comes back.
extension NtfyRoutes {
    /// The idempotency key of a sequence's notification.
    static func sequenceKey(topic: String, sequence: String, generation: Int) -> String {
        "ntfy-sequence:\(topic)/\(sequence)#\(generation)"
    }

    /// Why an earlier generation of a sequence is over: removed, or canceled before it was sent.
    static func isOver(_ error: HeraldError) -> Bool {
        error.code == "notification_removed" || error.code == "notification_final"
    }

    func registerSequenceActions(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        table.on(router.group(), prefix: "", Self.deleteOperation(.delete, "/{topic}/{sequence}"), use: delete)
        table.on(router.group(), prefix: "", Self.deleteOperation(.get, "/{topic}/{sequence}/delete"), use: delete)
        for method in [HTTPRequest.Method.put, .get] {
            for verb in ["clear", "read"] {
                table.on(
                    router.group(), prefix: "", Self.clearOperation(method, "/{topic}/{sequence}/\(verb)"), use: clear)
            }
        }
    }

    /// `PUT`/`POST /<topic>/<sequence id>`: the topic form, in a sequence.
    @Sendable func publishToSequence(_ request: Request, context: HeraldRequestContext) async -> Response {
        do {
            let topic = try Self.topic(context)
            return await publish(request, topic: topic, sequence: try Self.sequence(context), context: context)
        } catch {
            return error.response()
        }
    }

    /// Accepts a message of a sequence: the change of its notification, or the sequence's first.
    func publish(_ send: SendRequest, sequence: String, topic: String, appID: String) async throws -> PushNotification {
        var generation = 1
        while true {
            let key = Self.sequenceKey(topic: topic, sequence: sequence, generation: generation)
            if let current = try await sequenceNotification(key: key, sequence: sequence, topic: topic, appID: appID) {
                do {
                    switch try await dispatcher.changeNotification(
                        NotificationChange(payload: send.payload), id: current.id, appID: appID)
                    {
                    case .replaced(let notification), .canceled(let notification), .revised(let notification):
                        return notification
                    }
                } catch let error as HeraldError where Self.isOver(error) {
                    generation += 1
                    continue
                }
            }
            var first = send
            first.idempotencyKey = key
            guard case .accepted(let notification, let created) = try await dispatcher.submit(first, appID: appID)
            else { throw HeraldError.internal("The engine answered a send with a dry run.") }
            // Another message of the sequence stored it first: this one changes it.
            if created { return notification }
        }
    }

    /// The sequence's notification of a generation; for the first, also a notification published
    /// in the sequence whose own id is used as the sequence id (ntfy's "use the message ID").
    private func sequenceNotification(
        key: String, sequence: String, topic: String, appID: String
    ) async throws -> PushNotification? {
        if let found = try await store.notification(appID: appID, idempotencyKey: key) { return found }
        guard key.hasSuffix("#1"), let own = try await store.notification(appID: appID, id: sequence),
            own.source == Self.source, own.revision != nil, own.payload.data["topic"] == .string(topic)
        else { return nil }
        return own
    }

    /// `PUT /<topic>/<sequence id>/clear` (or `/read`, or `GET`): ntfy marks it read and dismisses it;
    /// Herald removes it from the devices.
    @Sendable func clear(_ request: Request, context: HeraldRequestContext) async -> Response {
        await act(request, context: context, event: "message_clear")
    }

    /// `DELETE /<topic>/<sequence id>` (or `GET …/delete`): removes it from the devices.
    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async -> Response {
        await act(request, context: context, event: "message_delete")
    }

    private func act(_ request: Request, context: HeraldRequestContext, event: String) async -> Response {
        do {
            let topic = try Self.topic(context)
            let sequence = try Self.sequence(context)
            let publisher = try authenticate(request, query: request.uri.queryParameters)
            let app = settings[publisher.appID] ?? PublishConfiguration()
            guard app.enabled else { throw NtfyError.forbidden() }
            _ = try Self.target(of: publisher, topic: topic)
            let now = now()
            if let retryAfter = try await Publishing.spend(
                bucket: publisher.bucket, perMinute: app.messagesPerMinute, store: store, now: now)
            {
                return NtfyError.tooManyRequests().response(retryAfter: retryAfter)
            }
            guard let removal = try await remove(sequence: sequence, topic: topic, appID: publisher.appID) else {
                throw NtfyError.sequenceNotFound()
            }
            context.logger.debug(
                "ntfy sequence removed",
                metadata: [
                    "herald.notification": "\(removal.id)", "herald.topic": "\(topic)", "herald.event": "\(event)",
                ])
            let time = Int(now.timeIntervalSince1970)
            return Self.json([
                "id": .string(removal.id), "time": .number(JSONNumber(time)),
                "expires": .number(JSONNumber(time + 43_200)), "event": .string(event), "topic": .string(topic),
                "sequence_id": .string(sequence),
            ])
        } catch let error as NtfyError {
            context.logger.info("ntfy sequence action refused", metadata: ["herald.error": "\(error.code)"])
            return error.response()
        } catch {
            context.logger.error("ntfy sequence action failed", metadata: ["herald.cause": "\(type(of: error))"])
            return NtfyError.internalError().response()
        }
    }

    /// Removes the sequence's current notification: its removal, or the notification canceled
    /// before its time. nil when the sequence has none left on the devices.
    private func remove(sequence: String, topic: String, appID: String) async throws -> PushNotification? {
        var generation = 1
        while true {
            let key = Self.sequenceKey(topic: topic, sequence: sequence, generation: generation)
            guard let current = try await sequenceNotification(key: key, sequence: sequence, topic: topic, appID: appID)
            else { return nil }
            do {
                switch try await dispatcher.removeNotification(id: current.id, appID: appID) {
                case .replaced(let notification), .canceled(let notification), .revised(let notification):
                    return notification
                }
            } catch let error as HeraldError where Self.isOver(error) {
                generation += 1
            }
        }
    }

    /// The path's sequence id (ntfy's topic rule).
    /// - Throws: `NtfyError` `40049`.
    static func sequence(_ context: HeraldRequestContext) throws(NtfyError) -> String {
        let sequence = context.parameters.get("sequence") ?? ""
        guard NtfyMessage.isValidTopic(sequence) else { throw NtfyError.invalidSequenceID() }
        return sequence
    }
}
