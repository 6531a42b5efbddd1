import CoreMetrics
import Prometheus

/// Where Herald's metrics are collected and how `/metrics` renders them: one Prometheus registry
/// behind swift-metrics. `herald serve` bootstraps swift-metrics with ``factory`` so the engine's
/// and Hummingbird's metrics land in ``registry``; tests may use an export that is not bootstrapped
/// (then only what `/metrics` samples itself is in it).
public struct MetricsExport: Sendable {
    /// The collectors `/metrics` renders.
    public let registry: PrometheusCollectorRegistry
    /// The swift-metrics backend writing into ``registry``, with Herald's names and buckets.
    public let factory: PrometheusMetricsFactory

    /// An export with a new registry.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        factory.nameAndLabelSanitizer = Self.rename
        self.factory = factory
    }

    /// Makes this export the process's swift-metrics backend (once per process).
    public func bootstrap() {
        MetricsSystem.bootstrap(factory)
    }

    /// From 1 ms (a provider answering on a LAN) to 30 s (the request timeout).
    static let durationBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30),
    ]

    /// Hummingbird's `MetricsMiddleware` names its metrics after OpenTelemetry's conventions
    /// (`hb.requests`, `http.route`); they are exported under Herald's Prometheus names.
    @Sendable static func rename(_ name: String, _ labels: [(String, String)]) -> (String, [(String, String)]) {
        let names = [
            "hb.requests": "herald_http_requests_total",
            "hb.request.errors": "herald_http_request_errors_total",
            "http.server.request.duration": "herald_http_request_duration_seconds",
            "http.server.active_requests": "herald_http_active_requests",
        ]
        let labelNames = [
            "http.route": "route", "http.request.method": "method", "http.response.status_code": "status",
            "error.type": "status",
        ]
        return (names[name] ?? name, labels.map { (labelNames[$0.0] ?? $0.0, $0.1) })
    }
}
