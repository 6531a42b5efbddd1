import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldWebhooks
import Hummingbird
import Logging

/// The app's webhook endpoints: `/v1/webhooks` (server key only; docs/webhooks.md). A secret is shown
/// when it is made (creation, rotation) and never again; an endpoint from the configuration is read here
/// and changed only there.
struct WebhookRoutes: Sendable {
    let store: any WebhookStore
    let policy: WebhookNetworkPolicy
    let maxBodyBytes: Int
    let now: @Sendable () -> Date

    func register(on group: RouterGroup<HeraldRequestContext>, prefix: String, table: inout RouteTable) {
        table.on(group, prefix: prefix, Self.createOperation, use: create)
        table.on(group, prefix: prefix, Self.listOperation, use: list)
        table.on(group, prefix: prefix, Self.readOperation, use: read)
        table.on(group, prefix: prefix, Self.updateOperation, use: update)
        table.on(group, prefix: prefix, Self.deleteOperation, use: delete)
        table.on(group, prefix: prefix, Self.rotateOperation, use: rotate)
        table.on(group, prefix: prefix, Self.testOperation, use: test)
        table.on(group, prefix: prefix, Self.deliveriesOperation, use: deliveries)
        table.on(group, prefix: prefix, Self.replayOperation, use: replay)
    }

    @Sendable func create(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let change = try WebhookEndpointChange(parsing: try await request.jsonBody(limit: maxBodyBytes), creating: true)
        let url = change.url ?? ""
        _ = try policy.check(url: url)
        let now = now()
        let secret = WebhookSecret.generate()
        let endpoint = WebhookEndpoint(
            id: change.id ?? Identifier.make(now: now), appID: appID, url: url, events: change.events ?? [],
            description: change.description ?? nil, secrets: [secret],
            disabledReason: change.enabled == false ? .manual : nil, createdAt: now, updatedAt: now)
        try await store.createWebhookEndpoint(endpoint)
        context.logger.info(
            "webhook endpoint created", metadata: ["herald.webhook": "\(endpoint.id)", "herald.app": "\(appID)"])
        var view = WebhookView.json(endpoint, backlog: 0)
        view["secret"] = .string(secret.value)
        return .json(.object(view), status: .created)
    }

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        var items: [JSONValue] = []
        for endpoint in try await store.webhookEndpoints(appID: appID) {
            let backlog = try await store.webhookBacklog(appID: appID, endpointID: endpoint.id)
            items.append(.object(WebhookView.json(endpoint, backlog: backlog)))
        }
        return .json(ListQuery.page(items, next: nil))
    }

    @Sendable func read(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let endpoint = try await endpoint(context)
        let backlog = try await store.webhookBacklog(appID: endpoint.appID, endpointID: endpoint.id)
        return .json(.object(WebhookView.json(endpoint, backlog: backlog)))
    }

    @Sendable func update(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var endpoint = try await changeable(context)
        let change = try WebhookEndpointChange(
            parsing: try await request.jsonBody(limit: maxBodyBytes), creating: false)
        if let url = change.url {
            _ = try policy.check(url: url)
            endpoint.url = url
        }
        if let events = change.events { endpoint.events = events }
        if let description = change.description { endpoint.description = description }
        switch change.enabled {
        case true?:
            // Enabling again starts afresh: the failures that disabled it are forgiven.
            if endpoint.disabledReason != nil { endpoint.failingSince = nil }
            endpoint.disabledReason = nil
        case false?: endpoint.disabledReason = endpoint.disabledReason ?? .manual
        case nil: break
        }
        endpoint.updatedAt = now()
        guard try await store.updateWebhookEndpoint(endpoint) else { throw HeraldError.notFound("Webhook endpoint") }
        let backlog = try await store.webhookBacklog(appID: endpoint.appID, endpointID: endpoint.id)
        return .json(.object(WebhookView.json(endpoint, backlog: backlog)))
    }

    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let endpoint = try await changeable(context)
        guard try await store.deleteWebhookEndpoint(appID: endpoint.appID, id: endpoint.id) else {
            throw HeraldError.notFound("Webhook endpoint")
        }
        context.logger.info(
            "webhook endpoint deleted",
            metadata: ["herald.webhook": "\(endpoint.id)", "herald.app": "\(endpoint.appID)"])
        return Response(status: .noContent)
    }

    /// A new secret; the previous ones keep signing until the overlap ends, so receivers can roll.
    @Sendable func rotate(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        var endpoint = try await changeable(context)
        // The body is optional: without one (no Content-Type), the default overlap.
        let value =
            request.headers[.contentType] == nil
            ? JSONValue.object([:]) : try await request.jsonBody(limit: maxBodyBytes)
        let body = try JSONObjectReader(value)
        try body.rejectUnknown(allowed: ["overlap_seconds"])
        let overlap = try body.integer("overlap_seconds", in: 0...Self.maxOverlapSeconds) ?? Self.defaultOverlapSeconds
        let now = now()
        let expiry = now.addingTimeInterval(TimeInterval(overlap))
        let secret = WebhookSecret.generate()
        endpoint.secrets =
            [secret]
            + endpoint.signingSecrets(at: now).map { old in
                var old = old
                old.expiresAt = min(old.expiresAt ?? expiry, expiry)
                return old
            }.filter { ($0.expiresAt ?? now) > now }
        endpoint.updatedAt = now
        guard try await store.updateWebhookEndpoint(endpoint) else { throw HeraldError.notFound("Webhook endpoint") }
        context.logger.info("webhook secret rotated", metadata: ["herald.webhook": "\(endpoint.id)"])
        return .json(
            .object([
                "id": .string(endpoint.id), "secret": .string(secret.value),
                "previous_secrets_expire_at": overlap > 0 ? InstallationView.timestamp(expiry) : .null,
            ]))
    }

    /// Sends the endpoint a `webhook.test` event through the outbox, as any event goes.
    @Sendable func test(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let endpoint = try await endpoint(context)
        guard endpoint.enabled else {
            throw HeraldError(
                kind: .conflict, code: "webhook_disabled",
                message:
                    "Webhook endpoint \(endpoint.id) is disabled (\(endpoint.disabledReason?.rawValue ?? "")): enable it first."
            )
        }
        let now = now()
        let event = WebhookEvent(
            appID: endpoint.appID, type: .webhookTest, occurredAt: now,
            data: ["app_id": .string(endpoint.appID), "webhook_id": .string(endpoint.id)])
        try await store.enqueueWebhookEvents([event], endpointID: endpoint.id)
        return .json(.object(["event_id": .string(event.id), "type": .string(event.type.rawValue)]), status: .accepted)
    }

    /// Sends the endpoint's events again from a time on (those the outbox still keeps).
    @Sendable func replay(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let endpoint = try await endpoint(context)
        let body = try JSONObjectReader(try await request.jsonBody(limit: maxBodyBytes))
        try body.rejectUnknown(allowed: ["since"])
        guard let text = try body.string("since") else { throw HeraldError.missingField("since") }
        guard case .instant(let since)? = PushTime.parse(text) else {
            throw HeraldError.invalidValue(
                "since", code: "invalid_timestamp",
                "Field 'since' must be an RFC 3339 date-time with an offset, like 2026-12-24T09:00:00Z.")
        }
        let count = try await store.replayWebhookDeliveries(
            appID: endpoint.appID, endpointID: endpoint.id, since: since, now: now())
        context.logger.info(
            "webhook events replayed", metadata: ["herald.webhook": "\(endpoint.id)", "herald.events": "\(count)"])
        return .json(.object(["replayed": .number(JSONNumber(count))]), status: .accepted)
    }

    @Sendable func deliveries(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let endpoint = try await endpoint(context)
        let query = try ListQuery(request.uri.queryParameters, declared: Self.deliveriesParameters)
        let page = try query.page()
        let rows = try await store.webhookDeliveries(appID: endpoint.appID, endpointID: endpoint.id, limit: page.limit)
        return .json(ListQuery.page(rows.map(WebhookView.json), next: nil))
    }

    private func endpoint(_ context: HeraldRequestContext) async throws -> WebhookEndpoint {
        let appID = try Self.server(context)
        guard let id = context.parameters.get("id"), id.count <= WebhookEndpointChange.maxIDLength,
            let endpoint = try await store.webhookEndpoint(appID: appID, id: id)
        else { throw HeraldError.notFound("Webhook endpoint") }
        return endpoint
    }

    /// An endpoint the API may change: not one from the configuration.
    private func changeable(_ context: HeraldRequestContext) async throws -> WebhookEndpoint {
        let endpoint = try await endpoint(context)
        guard !endpoint.configured else {
            throw HeraldError(
                kind: .conflict, code: "webhook_configured",
                message:
                    "Webhook endpoint \(endpoint.id) comes from the configuration (app.\(endpoint.appID).webhooks): change it there."
            )
        }
        return endpoint
    }

    static let defaultOverlapSeconds = 86_400
    static let maxOverlapSeconds = 7 * 86_400

    /// Webhooks take the server key.
    static func server(_ context: HeraldRequestContext) throws(HeraldError) -> String {
        try context.requireServerKey("Webhook endpoints take the app's server key.")
    }
}

/// The API's view of endpoints and outbox rows (never a secret).
enum WebhookView {
    static func json(_ endpoint: WebhookEndpoint, backlog: Int) -> [String: JSONValue] {
        [
            "id": .string(endpoint.id), "url": .string(endpoint.url),
            "events": .array(endpoint.events.map { .string($0.rawValue) }),
            "description": endpoint.description.map(JSONValue.string) ?? .null,
            "enabled": .bool(endpoint.enabled),
            "disabled_reason": endpoint.disabledReason.map { .string($0.rawValue) } ?? .null,
            "configured": .bool(endpoint.configured),
            "failing_since": InstallationView.timestamp(endpoint.failingSince),
            "last_success_at": InstallationView.timestamp(endpoint.lastSuccessAt),
            "backlog": .number(JSONNumber(backlog)),
            "created_at": InstallationView.timestamp(endpoint.createdAt),
            "updated_at": InstallationView.timestamp(endpoint.updatedAt),
        ]
    }

    static func json(_ row: WebhookDelivery) -> JSONValue {
        .object([
            "event_id": .string(row.eventID), "type": .string(row.eventType.rawValue),
            "created_at": InstallationView.timestamp(row.createdAt), "state": .string(row.state.rawValue),
            "attempts": .number(JSONNumber(row.attempts)),
            "next_attempt_at": InstallationView.timestamp(row.state == .pending ? row.nextAttemptAt : nil),
            "last_attempt_at": InstallationView.timestamp(row.lastAttemptAt),
            "last_status": row.lastStatus.map { .number(JSONNumber($0)) } ?? .null,
            "last_error": row.lastError.map(JSONValue.string) ?? .null,
        ])
    }
}
