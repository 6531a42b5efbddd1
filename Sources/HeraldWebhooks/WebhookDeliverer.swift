import CoreMetrics
import Foundation
import HeraldCore
import Logging
import ServiceLifecycle

/// Delivers the outbox (docs/webhooks.md, "Delivery"): claims due rows of any app, sends each
/// endpoint's rows in order, one request at a time per endpoint and several endpoints at once,
/// and records each attempt: a `2xx` delivers, `410 Gone` disables the endpoint, anything else (no
/// answer included) is tried again on the ``WebhookRetrySchedule`` until it is used up. Every node
/// runs one; rows are leased, so each attempt is made by one node, and a node that dies mid-attempt
/// leaves its rows to be claimed again when the lease ends.
public struct WebhookDeliverer: Service {
    /// How the deliverer paces itself.
    public struct Configuration: Sendable {
        /// How long an idle deliverer waits before it looks again.
        public var pollInterval: Duration
        /// How long a claimed row is held: longer than a batch takes (the sender's bounds, per endpoint in turn).
        public var lease: Duration
        /// The most rows claimed at once.
        public var batch: Int
        /// How many endpoints are sent to at once.
        public var concurrency: Int
        public var schedule: WebhookRetrySchedule
        /// The most events one endpoint may have waiting; past it the oldest are dropped (`webhooks.max_backlog`).
        public var maxBacklog: Int
        /// How often the backlogs are checked against ``maxBacklog``.
        public var trimInterval: Duration

        /// Creates a configuration.
        public init(
            pollInterval: Duration = .seconds(1), lease: Duration = .seconds(300), batch: Int = 64,
            concurrency: Int = 8, schedule: WebhookRetrySchedule = .standard, maxBacklog: Int = 100_000,
            trimInterval: Duration = .seconds(60)
        ) {
            self.pollInterval = pollInterval
            self.lease = lease
            self.batch = batch
            self.concurrency = concurrency
            self.schedule = schedule
            self.maxBacklog = maxBacklog
            self.trimInterval = trimInterval
        }
    }

    private let store: any WebhookStore
    private let sender: WebhookSender
    private let configuration: Configuration
    private let now: @Sendable () -> Date
    private let clock: any Clock<Duration>
    private let owner: String
    private let logger: Logger

    /// Creates a node's deliverer.
    public init(
        store: any WebhookStore, sender: WebhookSender, configuration: Configuration = Configuration(),
        node: String = ProcessInfo.processInfo.hostName, now: @escaping @Sendable () -> Date = Date.init,
        clock: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "herald.webhooks")
    ) {
        self.store = store
        self.sender = sender
        self.configuration = configuration
        self.now = now
        self.clock = clock
        self.owner = "\(node)-\(ProcessInfo.processInfo.processIdentifier)-webhooks"
        self.logger = logger
    }

    public func run() async throws {
        // Real time, not the injected clock: the trim is housekeeping (tests call trimBacklogs() directly).
        var trimmed = ContinuousClock.now
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            var delivered = 0
            do {
                if trimmed.duration(to: .now) >= configuration.trimInterval {
                    trimmed = .now
                    try await trimBacklogs()
                }
                delivered = try await deliverDue()
            } catch {
                logger.error("delivering webhooks failed", metadata: ["error": "\(error)"])
            }
            if delivered == 0 {
                do {
                    try await cancelWhenGracefulShutdown { try await clock.sleep(for: configuration.pollInterval) }
                } catch {
                    break
                }
            }
        }
        await sender.shutdown()
    }

    /// Drops what is past each endpoint's backlog limit, counted in `herald_webhook_events_dropped_total`.
    public func trimBacklogs() async throws {
        for trim in try await store.trimWebhookBacklogs(limit: configuration.maxBacklog, now: now()) {
            Counter(label: "herald_webhook_events_dropped_total", dimensions: [("app", trim.appID)])
                .increment(by: trim.dropped)
            logger.warning(
                "a webhook endpoint's backlog was over its limit: its oldest events were dropped",
                metadata: [
                    "herald.app": "\(trim.appID)", "herald.webhook": "\(trim.endpointID)",
                    "herald.dropped": "\(trim.dropped)", "herald.limit": "\(configuration.maxBacklog)",
                ])
        }
    }

    /// One round: claims the due rows and attempts each. Returns how many were attempted.
    @discardableResult
    public func deliverDue() async throws -> Int {
        let start = now()
        let leaseEnd = start.addingTimeInterval(configuration.lease.timeInterval)
        let rows = try await store.claimWebhookDeliveries(
            owner: owner, now: start, lockedUntil: leaseEnd, limit: configuration.batch)
        guard !rows.isEmpty else { return 0 }
        // Each endpoint's rows in order, one at a time; endpoints side by side.
        var byEndpoint: [String: [WebhookDelivery]] = [:]
        var order: [String] = []
        for row in rows {
            let key = row.appID + "\u{0}" + row.endpointID
            if byEndpoint[key] == nil { order.append(key) }
            byEndpoint[key, default: []].append(row)
        }
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for key in order {
                if running == configuration.concurrency {
                    await group.next()
                    running -= 1
                }
                let rows = byEndpoint[key] ?? []
                group.addTask { await deliver(rows, leaseEnd: leaseEnd) }
                running += 1
            }
        }
        return rows.count
    }

    /// Sends one endpoint's rows in order; after `410 Gone` the rest wait (the endpoint is disabled). A row
    /// whose attempt could outlast the lease (`leaseEnd`) is left for a later claim, so no other node
    /// attempts it while this one does.
    private func deliver(_ rows: [WebhookDelivery], leaseEnd: Date) async {
        for row in rows {
            guard now().addingTimeInterval(sender.longestAttempt.timeInterval) < leaseEnd else { return }
            let result = await sender.send(row, now: now())
            let at = now()
            let outcome: WebhookAttempt.Outcome
            switch result.status {
            case .some(let status) where (200..<300).contains(status): outcome = .delivered
            case .some(410): outcome = .gone
            default:
                outcome = .failed(nextAttemptAt: configuration.schedule.nextAttempt(after: row.attempts + 1, now: at))
            }
            let label =
                switch outcome {
                case .delivered: "delivered"
                case .gone: "gone"
                case .failed(let next): next == nil ? "failed" : "retrying"
                }
            Counter(label: "herald_webhook_deliveries_total", dimensions: [("outcome", label)]).increment()
            CoreMetrics.Timer(label: "herald_webhook_delivery_duration_seconds", preferredDisplayUnit: .seconds)
                .recordNanoseconds(Int64(result.duration.timeInterval * 1e9))
            let metadata: Logger.Metadata = [
                "herald.app": "\(row.appID)", "herald.webhook": "\(row.endpointID)", "herald.event": "\(row.eventID)",
                "herald.outcome": "\(label)", "herald.status": "\(result.status.map(String.init) ?? "none")",
            ]
            switch outcome {
            case .delivered: logger.debug("webhook delivered", metadata: metadata)
            case .failed(.some):
                logger.info(
                    "webhook attempt failed", metadata: metadata.merging(["error": "\(result.error ?? "")"]) { $1 })
            case .failed(.none):
                logger.warning(
                    "webhook event given up", metadata: metadata.merging(["error": "\(result.error ?? "")"]) { $1 })
            case .gone: logger.warning("webhook endpoint answered 410 Gone: disabled", metadata: metadata)
            }
            do {
                let recorded = try await store.recordWebhookAttempt(
                    WebhookAttempt(
                        deliveryID: row.id, owner: owner, at: at, outcome: outcome, status: result.status,
                        error: result.error))
                if !recorded {
                    logger.warning("a webhook row's lease was lost before its attempt was recorded", metadata: metadata)
                }
            } catch {
                logger.error(
                    "recording a webhook attempt failed", metadata: metadata.merging(["error": "\(error)"]) { $1 })
            }
            if case .gone = outcome { return }
            // A failure may have been the one that disabled the endpoint (failing for too long): say so, once, and
            // leave the rest of its rows (they wait for it to be enabled again).
            if case .failed = outcome,
                let endpoint = try? await store.webhookEndpoint(appID: row.appID, id: row.endpointID),
                endpoint.disabledReason == .failing
            {
                logger.warning(
                    "webhook endpoint disabled: every attempt failed for too long",
                    metadata: metadata.merging([
                        "herald.failing_since": "\(endpoint.failingSince.map(WebhookEvent.timestamp) ?? "")"
                    ]) { $1 })
                return
            }
        }
    }
}
