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
        /// Herald's CPU time per `GET /healthz` sent at the same rate after the step: the HTTP floor.
        var cpuPerHealthz: Duration?
        /// The benchmark's own CPU time per request over the step (the generator and the APNs
        /// stand-in, which share the machine's cores with Herald).
        var benchCPUPerRequest: Duration?
        /// Why the step failed; nil when it passed.
        var failure: String?

        var passed: Bool { failure == nil }

        var line: String {
            var cpu = cpuPerNotification.map { String(format: "%.0f µs CPU each", $0 / .microseconds(1)) } ?? "CPU n/a"
            if let cpuPerNotification, let cpuPerHealthz, cpuPerHealthz > .zero {
                cpu += String(
                    format: " (%.1f× /healthz's %.0f µs)", cpuPerNotification / cpuPerHealthz,
                    cpuPerHealthz / .microseconds(1))
            }
            if let benchCPUPerRequest {
                cpu += String(format: ", bench %.0f µs", benchCPUPerRequest / .microseconds(1))
            }
            let verdict = failure.map { "FAIL: \($0)" } ?? "pass"
            return String(
                format: "%6.0f/s  provider-answer p50 %.2f p99 %.2f ms  answer p99 %.2f ms  %@  %@",
                rate, summary.afterAnswer.p50, summary.afterAnswer.p99, summary.answer.p99, cpu, verdict)
        }
    }

    /// Makes the generator of a rate: the route's requests, or `GET /healthz` (`floor`).
    let generator: (_ rate: Double, _ floor: Bool) -> LatencyGenerator
    let sink: ReceiptSink
    let seconds: Double
    let bound: Duration
    let settle: Duration
    let cpu: ProcessCPU?
    /// Seconds of `GET /healthz` at the step's rate after each step (0: none).
    let floorSeconds: Double

    /// Runs one step at `rate`, then its HTTP floor.
    func step(_ rate: Double, prefix: String, drain: Double) async -> Step {
        let before = cpu?.used()
        let benchBefore = ProcessCPU.ownProcess.used()
        let phase = await generator(rate, false).run(prefix: prefix, seconds: seconds, sink: sink, drain: drain)
        let after = cpu?.used()
        let benchAfter = ProcessCPU.ownProcess.used()
        let summary = LatencySummary(phase: phase, sink: sink, settle: settle)
        var step = Step(rate: rate, summary: summary)
        if let before, let after, summary.accepted > 0 { step.cpuPerNotification = (after - before) / summary.accepted }
        if let benchBefore, let benchAfter {
            step.benchCPUPerRequest = (benchAfter - benchBefore) / phase.samples.count
        }
        if floorSeconds > 0, let cpu {
            let before = cpu.used()
            let floor = await generator(rate, true).run(prefix: prefix, seconds: floorSeconds, sink: sink, drain: 0)
            let answered = floor.samples.filter { $0.accepted != nil }.count
            if let before, let after = cpu.used(), answered > 0 { step.cpuPerHealthz = (after - before) / answered }
        }
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
struct ProcessCPU {
    let pid: Int
    private let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    init(pid: Int) {
        self.pid = pid
    }

    /// The benchmark's own process.
    static var ownProcess: ProcessCPU { ProcessCPU(pid: Int(getpid())) }

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
