import Foundation
import HeraldCore

/// The capacity search of `herald-bench latency`: steps at fixed rates, each at least `seconds`
/// long, rising by half while a step passes and then halving the gap between the highest rate
/// that passed and the lowest that failed, until they are within a tenth. A step passes when
/// every request is accepted, every accepted one reaches the provider within `settle` after the
/// step's last scheduled request (the queue is empty then), and the p99 of (provider receipt −
/// accepted answer) is within `bound`.
struct LatencySearch {
    /// What one step measured.
    struct Step {
        var rate: Double
        var summary: LatencySummary
        /// Herald's CPU time per accepted notification over the step (first request to last receipt).
        var cpuPerNotification: Duration?
        /// Why the step failed; nil when it passed.
        var failure: String?

        var passed: Bool { failure == nil }

        var line: String {
            let cpu = cpuPerNotification.map { String(format: "%.0f µs CPU each", $0 / .microseconds(1)) } ?? "CPU n/a"
            let verdict = failure.map { "FAIL: \($0)" } ?? "pass"
            return String(
                format: "%6.0f/s  provider-answer p50 %.2f p99 %.2f ms  answer p99 %.2f ms  %@  %@",
                rate, summary.afterAnswer.p50, summary.afterAnswer.p99, summary.answer.p99, cpu, verdict)
        }
    }

    let generator: (Double) -> LatencyGenerator
    let sink: ReceiptSink
    let seconds: Double
    let bound: Duration
    let settle: Duration
    let cpu: HeraldCPU?

    /// Runs one step at `rate`.
    func step(_ rate: Double, prefix: String, drain: Double) async -> Step {
        let before = cpu?.used()
        let phase = await generator(rate).run(prefix: prefix, seconds: seconds, sink: sink, drain: drain)
        let after = cpu?.used()
        let summary = LatencySummary(phase: phase, sink: sink, settle: settle)
        var step = Step(rate: rate, summary: summary)
        if let before, let after, summary.accepted > 0 { step.cpuPerNotification = (after - before) / summary.accepted }
        if !summary.errors.isEmpty {
            step.failure = "\(summary.errors.count) not accepted"
        } else if summary.delivered < summary.accepted {
            step.failure = "\(summary.accepted - summary.delivered) never reached the provider"
        } else if summary.late > 0 {
            step.failure = "\(summary.late) reached the provider more than \(settle) after the step"
        } else if summary.afterAnswer.p99 > bound / .milliseconds(1) {
            step.failure = String(format: "p99 %.2f ms over the bound", summary.afterAnswer.p99)
        }
        return step
    }

    /// Finds the highest passing rate from `start` up to `maximum`; returns every step in order.
    func run(start: Double, maximum: Double, prefix: String, drain: Double, report: (Step) -> Void) async -> [Step] {
        var steps: [Step] = []
        var passed: Double?
        var failed: Double?
        var rate = min(start, maximum)
        while true {
            let step = await self.step(rate, prefix: "\(prefix)-\(steps.count)", drain: drain)
            steps.append(step)
            report(step)
            if step.passed { passed = max(passed ?? 0, rate) } else { failed = min(failed ?? .infinity, rate) }
            // Let what the step left behind (checkpoints, idle connections) settle before the next.
            try? await Task.sleep(for: .seconds(2))
            switch (passed, failed) {
            case (let low?, nil):
                guard low < maximum else { return steps }
                rate = min(maximum, (low * 1.5).rounded())
            case (nil, let high?):
                guard high > 50 else { return steps }
                rate = max(50, (high / 2).rounded())
            case (let low?, let high?):
                guard high / low > 1.1 else { return steps }
                rate = ((low + high) / 2).rounded()
            case (nil, nil):
                return steps
            }
        }
    }
}

/// The CPU time a process has used (user and system), read from `/proc/<pid>/stat`.
struct HeraldCPU {
    let pid: Int
    private let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    init(pid: Int) {
        self.pid = pid
    }

    /// The CPU time used so far; nil when the process is gone.
    func used() -> Duration? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name: state is field 3, utime 14 and stime 15.
        let fields = text[text.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return .milliseconds(Int64(((user + system) / ticksPerSecond * 1000).rounded()))
    }
}
