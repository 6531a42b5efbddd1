import Foundation
import HeraldCore

/// The figures of one measured run of `herald-bench latency`: percentiles by sorting every sample (no
/// histogram), in milliseconds.
struct LatencySummary {
    /// Percentiles of one latency, in milliseconds.
    struct Distribution {
        var p50 = 0.0
        var p90 = 0.0
        var p99 = 0.0
        var max = 0.0
        var min = 0.0

        init(_ values: [Double]) {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return }
            // Nearest rank: the smallest sample with at least p of the samples at or below it.
            func rank(_ p: Double) -> Double { sorted[Swift.max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1)] }
            p50 = rank(0.50)
            p90 = rank(0.90)
            p99 = rank(0.99)
            max = sorted[sorted.count - 1]
            min = sorted[0]
        }

        var text: String {
            func ms(_ value: Double) -> String { String(format: "%.2f", value) }
            return "p50 \(ms(p50))  p90 \(ms(p90))  p99 \(ms(p99))  max \(ms(max))  (min \(ms(min))) ms"
        }

        var json: JSONValue {
            func ms(_ value: Double) -> JSONValue { .number(JSONNumber((value * 1000).rounded() / 1000)) }
            return .object(["p50": ms(p50), "p90": ms(p90), "p99": ms(p99), "max": ms(max), "min": ms(min)])
        }
    }

    let requests: Int
    let accepted: Int
    let delivered: Int
    let errors: [String]
    let achievedRate: Double
    let maxStartLag: Double
    /// Accepted requests that reached the provider later than `settle` after the last scheduled
    /// request (or never): what the queue still held then.
    let late: Int
    /// Provider receipt − accepted answer received (negative when the provider request came first).
    let afterAnswer: Distribution
    /// Provider receipt − the request's intended start.
    let afterStart: Distribution
    /// Accepted answer received − the request's intended start.
    let answer: Distribution

    init(phase: LatencyGenerator.Phase, sink: ReceiptSink, settle: Duration = .seconds(1)) {
        func ms(_ duration: Duration) -> Double { duration / .milliseconds(1) }
        var afterAnswer: [Double] = []
        var afterStart: [Double] = []
        var answer: [Double] = []
        var errors: [String] = []
        var late = 0
        let settled = (phase.samples.map(\.intended).max() ?? phase.start) + settle
        var lastAccepted = phase.start
        for sample in phase.samples {
            guard let accepted = sample.accepted else {
                errors.append(sample.error ?? "no answer")
                continue
            }
            lastAccepted = Swift.max(lastAccepted, accepted)
            answer.append(ms(accepted - sample.intended))
            if let receipt = sink.receipt(of: sample.marker) {
                afterAnswer.append(ms(receipt - accepted))
                afterStart.append(ms(receipt - sample.intended))
                if receipt > settled { late += 1 }
            } else {
                late += 1
            }
        }
        requests = phase.samples.count
        accepted = answer.count
        delivered = afterStart.count
        self.errors = errors
        self.late = late
        let elapsed = ms(lastAccepted - phase.start) / 1000
        achievedRate = elapsed > 0 ? Double(accepted) / elapsed : 0
        maxStartLag = ms(phase.maxStartLag)
        self.afterAnswer = Distribution(afterAnswer)
        self.afterStart = Distribution(afterStart)
        self.answer = Distribution(answer)
    }

    var text: String {
        var lines = [
            "requests \(requests), accepted \(accepted), at the provider \(delivered), errors \(errors.count)"
                + ", achieved \(String(format: "%.0f", achievedRate))/s"
                + " (generator lag max \(String(format: "%.2f", maxStartLag)) ms)",
            "provider - answer:  \(afterAnswer.text)",
            "provider - start:   \(afterStart.text)",
            "answer - start:     \(answer.text)",
        ]
        if accepted > delivered { lines.append("accepted but never at the provider: \(accepted - delivered)") }
        for error in Set(errors).prefix(3) { lines.append("error: \(error.prefix(300))") }
        return lines.joined(separator: "\n")
    }

    var json: JSONValue {
        .object([
            "requests": .number(JSONNumber(requests)), "accepted": .number(JSONNumber(accepted)),
            "at_provider": .number(JSONNumber(delivered)), "errors": .number(JSONNumber(errors.count)),
            "achieved_rate": .number(JSONNumber(achievedRate.rounded())),
            "generator_lag_max_ms": .number(JSONNumber((maxStartLag * 1000).rounded() / 1000)),
            "provider_minus_answer_ms": afterAnswer.json, "provider_minus_start_ms": afterStart.json,
            "answer_minus_start_ms": answer.json, "late": .number(JSONNumber(late)),
        ])
    }
}
