import HeraldCore
import NIOHTTP1

/// The open-loop load of `herald-bench latency`: request `n` starts at `start + n / rate` whatever happened to the
/// requests before it, and its latencies count from that intended instant.
struct LatencyGenerator: Sendable {
    /// One request: when it was meant to start, when its accepted answer's head arrived, or what failed.
    struct Sample: Sendable {
        /// The marker its payload carries to the provider.
        var marker: String
        /// When the schedule meant it to start.
        var intended: ContinuousClock.Instant
        /// When Herald's accepting answer (`202`, `201` for events) arrived; nil when it was not accepted.
        var accepted: ContinuousClock.Instant?
        /// Why it was not accepted.
        var error: String?
    }

    /// What one run produced.
    struct Phase: Sendable {
        /// Every request, in schedule order.
        var samples: [Sample]
        /// The first request's intended start.
        var start: ContinuousClock.Instant
        /// The longest a request started after its intended instant (the generator's own lag).
        var maxStartLag: Duration
    }

    let api: BenchAPIClient
    let route: LatencyBench.Route
    let fixture: LatencyFixture
    let rate: Double
    /// Sends `GET /healthz` instead of the route (answered `200`, nothing reaches the provider): the
    /// cost of an HTTP request alone at the same rate, over the same connections.
    var floor = false

    /// Sends `seconds × rate` requests on schedule, then waits up to `drain` for the sink to see every accepted one.
    func run(prefix: String, seconds: Double, sink: ReceiptSink, drain: Double) async -> Phase {
        let schedule = OpenLoop(rate: rate, count: max(1, Int((seconds * rate).rounded())))
        let run = await schedule.run { index, intended in
            await send(marker: "\(prefix)-\(index)", index: index, intended: intended)
        }
        let samples = run.results
        let accepted = floor ? [] : samples.filter { $0.accepted != nil }.map(\.marker)
        let deadline = ContinuousClock.now + .seconds(drain)
        while sink.received(accepted) < accepted.count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return Phase(samples: samples, start: run.start, maxStartLag: run.maxStartLag)
    }

    private func send(marker: String, index: Int, intended: ContinuousClock.Instant) async -> Sample {
        var sample = Sample(marker: marker, intended: intended)
        if floor {
            do {
                let answer = try await api.request(.GET, "/healthz", nil)
                if answer.status == 200 {
                    sample.accepted = answer.headReceivedAt
                } else {
                    sample.error = "\(answer.status)"
                }
            } catch {
                sample.error = "\(error)"
            }
            return sample
        }
        let path: String
        let body: JSONValue
        let expected: Int
        let title = JSONValue.string("Vehicle detected at Front Door")
        let summary = JSONValue.string("A silver sedan pulled into the driveway and parked near the garage door.")
        switch route {
        case .send:
            path = "/v1/notifications"
            expected = 202
            body = .object([
                "target": .object([
                    "installation_ids": .array([.string(fixture.installations[index % fixture.installations.count])])
                ]),
                "payload": .object([
                    "title": title, "body": summary, "sound": .string("default"),
                    "data": .object(["bench_id": .string(marker)]),
                ]),
            ])
        case .event:
            path = "/api/internal/events"
            expected = 201
            body = .object([
                "eventId": .string(marker), "id": .string(marker),
                "deviceId": .string(fixture.cameras[index % fixture.cameras.count]),
                "classifyEventType": .string("vehicle"), "classifySummaryShort": summary,
            ])
        }
        do {
            let answer = try await api.request(.POST, path, body)
            if answer.status == expected {
                sample.accepted = answer.headReceivedAt
            } else {
                sample.error = "\(answer.status) \(answer.text)"
            }
        } catch {
            sample.error = "\(error)"
        }
        return sample
    }
}
