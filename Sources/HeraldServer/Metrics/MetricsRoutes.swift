import CoreMetrics
import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import HummingbirdAuth
import NIOCore
import OpenAPIKit
import Prometheus

/// `GET /metrics`: the Prometheus text exposition of every metric in the export, after sampling
/// what is read rather than counted (the job queue, connection pools, open channels). Open, or
/// behind `Authorization: Bearer <metrics.token>` when one is set.
struct MetricsRoutes: Sendable {
    let export: MetricsExport
    let token: String?
    let store: any JobQueue
    let dispatcher: Dispatcher
    let now: @Sendable () -> Date

    static let operation = APIOperation(
        .get, "/metrics",
        summary: "Prometheus metrics (text exposition format 0.0.4); bearer metrics.token when one is set.",
        security: .none,
        responses: [
            (
                200,
                .custom(
                    OpenAPI.Response(
                        description: "The metrics.",
                        content: [.txt: .b(OpenAPI.Content(schema: JSONSchema.string))]))
            )
        ] + .errors(401))

    func register(on group: RouterGroup<HeraldRequestContext>, table: inout RouteTable) {
        table.on(group, prefix: "", Self.operation) { request, _ in
            if let token {
                guard let bearer = request.headers.bearer?.token, SecretComparison.equal(bearer, token) else {
                    throw HeraldError.unauthorized("Authorization: Bearer <metrics.token> is required.")
                }
            }
            await sample()
            var bytes: [UInt8] = []
            bytes.reserveCapacity(32 * 1024)
            export.registry.emit(into: &bytes)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    /// Updates the gauges of what is read, not counted.
    private func sample() async {
        let factory = export.factory
        func gauge(_ label: String, _ dimensions: [(String, String)] = [], _ value: Int) {
            Gauge(label: label, dimensions: dimensions, factory: factory).record(value)
        }
        let now = self.now()
        // The queue is the store's, the same on every node sharing it: `scope="cluster"` says so, for
        // dashboards to take one node's reading (max) rather than sum them; `herald_node_jobs` is this
        // node's own.
        let cluster = ("scope", "cluster")
        do {
            let queue = try await store.queueStatistics(now: now)
            gauge("herald_queue_jobs", [("state", "due"), cluster], queue.due)
            gauge("herald_queue_jobs", [("state", "running"), cluster], queue.running)
            gauge("herald_queue_jobs", [("state", "scheduled"), cluster], queue.scheduled)
            Gauge(label: "herald_queue_oldest_due_age_seconds", dimensions: [cluster], factory: factory).record(
                queue.oldestDueAt.map { max(0, now.timeIntervalSince($0)) } ?? 0)
            gauge("herald_database_up", [], 1)
        } catch {
            gauge("herald_database_up", [], 0)
        }
        for (appID, transports) in dispatcher.transports {
            for (service, transport) in transports.transports {
                guard let pool = transport.connectionStatistics else { continue }
                let dimensions = [("app", appID), ("service", service.rawValue)]
                gauge("herald_pool_connections", dimensions, pool.connections)
                gauge("herald_pool_connecting", dimensions, pool.connecting)
                gauge("herald_pool_streams_in_use", dimensions, pool.streamsInUse)
                gauge("herald_pool_waiting_requests", dimensions, pool.waiting)
            }
        }
        gauge("herald_channel_connections", [], dispatcher.channels.openCount)
        gauge("herald_node_jobs", [("state", "running")], dispatcher.workCounts.running)
        gauge("herald_node_jobs", [("state", "waiting")], dispatcher.handedWaiting)
        // Each webhook endpoint's waiting events (the outbox is the store's: one reading serves every node).
        if let webhooks = store as? any WebhookStore {
            for appID in dispatcher.transports.keys.sorted() {
                guard let endpoints = try? await webhooks.webhookEndpoints(appID: appID) else { continue }
                for endpoint in endpoints {
                    guard let backlog = try? await webhooks.webhookBacklog(appID: appID, endpointID: endpoint.id)
                    else { continue }
                    gauge("herald_webhook_backlog", [("app", appID), ("webhook", endpoint.id), cluster], backlog)
                }
            }
        }
    }
}
