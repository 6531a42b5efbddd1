import CoreMetrics
import HeraldCore
import Synchronization

/// The engine's metrics, through swift-metrics (`herald serve` exports them with swift-prometheus at
/// `/metrics`). Names follow Prometheus conventions; every label has a bounded set of values (apps,
/// services, outcomes, the providers' reason codes).
public enum EngineMetrics {
    /// The histogram of provider request durations, per service and app (set on each client's pool).
    public static func requestDuration(service: PushService, appID: String) -> CoreMetrics.Timer {
        CoreMetrics.Timer(
            label: "herald_provider_request_duration_seconds",
            dimensions: [("service", service.rawValue), ("app", appID)], preferredDisplayUnit: .seconds)
    }

    /// A notification was stored with its job, from the native API (`native`) or a dialect.
    static func accepted(_ notification: PushNotification, dialect: String) {
        Counter(
            label: "herald_notifications_accepted_total",
            dimensions: [("app", notification.appID), ("dialect", dialect)]
        ).increment()
    }

    /// A notification reached a final status.
    public static func finished(appID: String, status: NotificationStatus) {
        Counter(
            label: "herald_notifications_finished_total", dimensions: [("app", appID), ("status", status.rawValue)]
        ).increment()
    }
}

/// What one page's deliveries came to, counted while its outcomes are recorded and emitted once
/// (one metric update per kind, not per device).
final class DeliveryTally: Sendable {
    private struct Key: Hashable {
        var service: PushService
        var outcome: String
        var reason: String
    }

    private let counts = Mutex<[Key: Int]>([:])

    /// Counts a provider's (or the channel's) answer.
    func add(_ outcome: DeliveryOutcome, service: PushService) {
        switch outcome {
        case .delivered: add(service, "delivered", "")
        case .invalidToken(let reason, _), .rejectedToken(let reason): add(service, "invalid", reason)
        case .retry(let reason, _): add(service, "retry", reason)
        // Herald's own settings are at fault; the sentence says which, the label need not.
        case .configurationFailure: add(service, "failed", "configuration")
        case .rejected(let reason): add(service, "failed", reason)
        }
    }

    /// Counts a delivery that was not sent: `skipped` (preferences), `expired`, `waiting`.
    func add(_ service: PushService, _ outcome: String, _ reason: String) {
        // Reasons are the providers' codes; a long free-form one is cut so a label stays bounded.
        let key = Key(service: service, outcome: outcome, reason: String(reason.prefix(48)))
        counts.withLock { $0[key, default: 0] += 1 }
    }

    /// Emits the counts (`herald_deliveries_total` and the retry, invalidation and preference-skip
    /// counters) and starts over.
    func emit(appID: String) {
        let counts = self.counts.withLock { counts in
            defer { counts.removeAll(keepingCapacity: true) }
            return counts
        }
        for (key, count) in counts {
            Counter(
                label: "herald_deliveries_total",
                dimensions: [
                    ("app", appID), ("service", key.service.rawValue), ("outcome", key.outcome), ("reason", key.reason),
                ]
            ).increment(by: count)
            let dimensions = [("app", appID), ("service", key.service.rawValue)]
            switch key.outcome {
            case "retry": Counter(label: "herald_retries_total", dimensions: dimensions).increment(by: count)
            case "invalid": Counter(label: "herald_invalidations_total", dimensions: dimensions).increment(by: count)
            case "skipped":
                Counter(label: "herald_preference_skips_total", dimensions: dimensions).increment(by: count)
            default: break
            }
        }
    }
}
