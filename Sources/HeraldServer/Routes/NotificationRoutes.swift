import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging

/// The native send API: `/v1/notifications` (server key only).
struct NotificationRoutes: Sendable {
    let store: any DispatchStore & NotificationRecords
    /// Where a send's template is looked up (nil: a store without templates refuses one).
    let templates: (any TemplateStore)?
    let dispatcher: Dispatcher
    let maxBodyBytes: Int
    let now: @Sendable () -> Date

    func register(on group: RouterGroup<HeraldRequestContext>, prefix: String, table: inout RouteTable) {
        table.on(group, prefix: prefix, Self.sendOperation, use: send)
        table.on(group, prefix: prefix, Self.listOperation, use: list)
        table.on(group, prefix: prefix, Self.readOperation, use: read)
        table.on(group, prefix: prefix, Self.cancelOperation, use: cancel)
        table.on(group, prefix: prefix, Self.changeOperation, use: change)
        table.on(group, prefix: prefix, Self.removeDeliveredOperation, use: removeDelivered)
        table.on(group, prefix: prefix, Self.deliveriesOperation, use: deliveries)
    }

    @Sendable func send(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        var send = try SendRequest(
            parsing: try await request.jsonBody(limit: maxBodyBytes),
            idempotencyKeyHeader: request.headers[.idempotencyKey])
        if let use = send.template { send.template = try await resolved(use, appID: appID) }
        switch try await dispatcher.submit(send, appID: appID) {
        case .accepted(let notification, let created):
            if created {
                return .json(
                    .object(["id": .string(notification.id), "status": .string(notification.status.rawValue)]),
                    status: .accepted)
            }
            return .json(NotificationView.json(notification), status: .ok)
        case .dryRun(let audience):
            var byService: [String: JSONValue] = [:]
            for (service, count) in audience { byService[service.rawValue] = .number(JSONNumber(count)) }
            return .json(
                .object([
                    "dry_run": .bool(true), "targeted": .number(JSONNumber(audience.values.reduce(0, +))),
                    "by_service": .object(byService),
                ]))
        }
    }

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let query = try ListQuery(request.uri.queryParameters, declared: Self.listParameters)
        let status = query.enumeration("status", as: NotificationStatus.self)
        let page = try query.page()
        var notifications = try await store.notifications(
            appID: appID, status: status, page: PageRequest(after: page.after, limit: page.limit + 1))
        var next: String?
        if notifications.count > page.limit {
            notifications.removeLast()
            next = notifications.last.map { ListQuery.cursor(after: $0.id) }
        }
        return .json(ListQuery.page(notifications.map(NotificationView.json), next: next))
    }

    @Sendable func read(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        .json(NotificationView.json(try await notification(context)))
    }

    @Sendable func cancel(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let found = try await notification(context)
        guard !found.status.isFinal else {
            throw HeraldError(
                kind: .conflict, code: "notification_final",
                message:
                    "The notification is already \(found.status.rawValue); only scheduled, queued or sending ones can be canceled."
            )
        }
        guard let canceled = try await store.cancelNotification(appID: appID, id: found.id, now: now()) else {
            throw HeraldError.notFound("Notification")
        }
        if canceled.status == .canceled { EngineMetrics.finished(appID: appID, status: .canceled) }
        context.logger.info("notification canceled", metadata: ["herald.notification": "\(canceled.id)"])
        return .json(NotificationView.json(canceled))
    }

    @Sendable func change(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let id = try Self.id(context)
        var change = try NotificationChange(parsing: try await request.jsonBody(limit: maxBodyBytes))
        if let use = change.template { change.template = try await resolved(use, appID: appID) }
        return Self.response(try await dispatcher.changeNotification(change, id: id, appID: appID))
    }

    @Sendable func removeDelivered(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        return Self.response(try await dispatcher.removeNotification(id: try Self.id(context), appID: appID))
    }

    /// A change or removal: the notification changed in place or canceled (200), or its next
    /// revision (202, a notification of its own).
    private static func response(_ outcome: RevisionOutcome) -> Response {
        switch outcome {
        case .replaced(let notification), .canceled(let notification):
            .json(NotificationView.json(notification), status: .ok)
        case .revised(let notification): .json(NotificationView.json(notification), status: .accepted)
        }
    }

    /// A send's template at its current revision, the one the notification keeps (docs/content.md, "Templates").
    private func resolved(_ use: TemplateUse, appID: String) async throws -> TemplateUse {
        guard let template = try await templates?.template(appID: appID, name: use.name) else {
            throw HeraldError.invalidValue(
                "template.name", code: "template_not_found", "The app has no template named \(use.name).")
        }
        var use = use
        use.revision = template.revision
        use.content = template.content
        return use
    }

    @Sendable func deliveries(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let found = try await notification(context)
        let query = try ListQuery(request.uri.queryParameters, declared: Self.deliveriesParameters)
        let outcome = query.enumeration("outcome", as: DeliveryRecord.Outcome.self)
        let page = try query.page()
        var entries = try await store.deliveries(
            notificationID: found.id, outcome: outcome, page: PageRequest(after: page.after, limit: page.limit + 1))
        var next: String?
        if entries.count > page.limit {
            entries.removeLast()
            next = entries.last.map { ListQuery.cursor(after: String($0.sequence)) }
        }
        return .json(ListQuery.page(entries.map(NotificationView.json), next: next))
    }

    private func notification(_ context: HeraldRequestContext) async throws -> PushNotification {
        let appID = try Self.server(context)
        guard let notification = try await store.notification(appID: appID, id: try Self.id(context)) else {
            throw HeraldError.notFound("Notification")
        }
        return notification
    }

    /// The path's notification id (an id longer than any Herald makes names none).
    private static func id(_ context: HeraldRequestContext) throws(HeraldError) -> String {
        guard let id = context.parameters.get("id"), id.count <= 64 else { throw HeraldError.notFound("Notification") }
        return id
    }

    /// Sending and reading notifications takes the server key.
    static func server(_ context: HeraldRequestContext) throws(HeraldError) -> String {
        try context.requireServerKey("Sending and reading notifications takes the app's server key.")
    }
}

extension HTTPField.Name {
    /// `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header).
    static let idempotencyKey = Self("Idempotency-Key")!
}
