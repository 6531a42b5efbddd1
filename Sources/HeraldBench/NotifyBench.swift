import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// One open-loop step of Matrix push gateway notifies, for comparing gateways that serve the same API
/// (`bench/peer-sygnal.sh`: Herald and Sygnal): `POST /_matrix/push/v1/notify` with one device each, the pushkeys
/// in turn, a unique `event_id` per request, request `n` starting at `start + n / rate` (``OpenLoop``). It writes
/// one line per request (event id, scheduled wall-clock time, answer time, status, rejected pushkeys) for matching
/// against the sink's log of arrivals, and prints one JSON line: the counts, and the gateway's CPU time over the
/// step from `/proc/<pid>/stat`.
struct NotifyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "Open-loop Matrix push gateway notifies at a fixed rate, one line per request.",
        discussion: """
            Sends `POST /_matrix/push/v1/notify` (one device, pushkey n mod --pushkeys, event id PREFIX-n) on an \
            open-loop schedule and writes per request, tab-separated: event id, scheduled time and answer time \
            (seconds since 1970, the wall clock a sink's log uses), HTTP status (0: no answer), rejected pushkeys, \
            error. Prints one JSON line: requests, accepted (200 with nothing rejected), the gateway's CPU seconds \
            from the first scheduled request to --settle seconds after the last answer, the generator's own CPU \
            seconds and its longest start lag.
            """)

    @Option(help: "The gateway's base URL (the notify path is appended).") var url: String
    @Option(help: "The Matrix app id of every device.") var appId: String
    @Option(help: "Pushkeys used in turn: PREFIX followed by the index in 8 hex digits.") var pushkeys = 1000
    @Option(help: "Hex prefix of the pushkeys (56 digits makes 64-digit APNs tokens).") var pushkeyPrefix: String
    @Option(help: "Event ids are EVENT_PREFIX-n.") var eventPrefix: String
    @Option(help: "Requests per second.") var rate: Double
    @Option(help: "Seconds of requests (ignored with --count).") var seconds = 15.0
    @Option(help: "Requests in all, instead of --seconds × --rate.") var count: Int?
    @Option(help: "The first pushkey index (request n uses pushkey (first + n) mod --pushkeys).") var firstPushkey = 0
    @Option(help: "The gateway's process id, to read its CPU time over the step.") var pid: Int?
    @Option(help: "Seconds after the last answer before the gateway's CPU time is read again.") var settle = 1.0
    @Option(help: "Seconds a request may take before it counts as unanswered.") var timeout = 10
    @Option(help: "The file of one line per request.") var out: String

    func run() async throws {
        var configuration = HTTPClient.Configuration()
        // Open loop: requests are never queued in the client waiting for a connection.
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 512)
        let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        let result: Result<Void, any Error>
        do {
            try await measure(client)
            result = .success(())
        } catch {
            result = .failure(error)
        }
        try await client.shutdown()
        try result.get()
    }

    /// One request as the output file records it.
    private struct Sample: Sendable {
        var eventID: String
        var scheduled: Double
        var answered: Double?
        var status: Int = 0
        var rejected = 0
        var error = ""
        var accepted: Bool { status == 200 && rejected == 0 }
    }

    private func measure(_ client: HTTPClient) async throws {
        let total = count ?? max(1, Int((seconds * rate).rounded()))
        let target = url.hasSuffix("/") ? String(url.dropLast()) : url
        let notifyURL = target + "/_matrix/push/v1/notify"
        // The wall clock at one monotonic instant: scheduled instants become the times a sink's log can compare.
        let anchor = (clock: ContinuousClock.now, wall: Date().timeIntervalSince1970)
        @Sendable func wall(_ instant: ContinuousClock.Instant) -> Double {
            anchor.wall + (instant - anchor.clock).seconds
        }
        let gateway = pid.map(ProcessCPU.init(pid:))
        let cpuBefore = gateway?.used()
        let benchBefore = ProcessCPU.ownProcess.used()
        let run = await OpenLoop(rate: rate, count: total).run { index, intended in
            let eventID = "\(eventPrefix)-\(index)"
            var sample = Sample(eventID: eventID, scheduled: wall(intended))
            let pushkey = pushkeyPrefix + hex8((firstPushkey + index) % pushkeys)
            var request = HTTPClientRequest(url: notifyURL)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body(eventID: eventID, pushkey: pushkey).serialized()))
            do {
                let response = try await client.execute(request, timeout: .seconds(Int64(timeout)))
                sample.answered = Date().timeIntervalSince1970
                sample.status = Int(response.status.code)
                let bytes = try await response.body.collect(upTo: 1 << 20)
                if case .object(let object)? = try? JSONValue.parse(bytes.readableBytesView),
                    case .array(let rejected)? = object["rejected"]
                {
                    sample.rejected = rejected.count
                }
                if sample.status != 200 { sample.error = String(buffer: bytes).prefix(200).description }
            } catch {
                sample.error = "\(error)"
            }
            return sample
        }
        let benchAfter = ProcessCPU.ownProcess.used()
        try? await Task.sleep(for: .seconds(settle))
        let cpuAfter = gateway?.used()

        var lines = ""
        for sample in run.results {
            let answered = sample.answered.map { String(format: "%.6f", $0) } ?? "-"
            let error = sample.error.replacingOccurrences(of: "\t", with: " ")
                .replacingOccurrences(of: "\n", with: " ")
            lines += "\(sample.eventID)\t\(String(format: "%.6f", sample.scheduled))\t\(answered)\t"
            lines += "\(sample.status)\t\(sample.rejected)\t\(error)\n"
        }
        try lines.write(toFile: out, atomically: true, encoding: .utf8)

        let accepted = run.results.filter(\.accepted).count
        var summary: [String: JSONValue] = [
            "requests": .number(JSONNumber(run.results.count)),
            "accepted": .number(JSONNumber(accepted)),
            "rate": .number(JSONNumber(rate)),
            "scheduled_start": .number(JSONNumber(wall(run.start))),
            "scheduled_end": .number(JSONNumber(wall(run.start) + Double(total) / rate)),
            "max_start_lag_ms": .number(JSONNumber(run.maxStartLag.seconds * 1000)),
        ]
        if let first = run.results.first(where: { !$0.accepted }) {
            summary["first_error"] = .string("\(first.status) rejected \(first.rejected) \(first.error)")
        }
        if let cpuBefore, let cpuAfter {
            summary["gateway_cpu_s"] = .number(JSONNumber((cpuAfter - cpuBefore).seconds))
        }
        if let benchBefore, let benchAfter {
            summary["bench_cpu_s"] = .number(JSONNumber((benchAfter - benchBefore).seconds))
        }
        print(String(decoding: JSONValue.object(summary).serialized(), as: UTF8.self))
    }

    /// A Matrix notify of a message event to one device, in the shape a homeserver sends.
    private func body(eventID: String, pushkey: String) -> JSONValue {
        .object([
            "notification": .object([
                "event_id": .string(eventID),
                "room_id": .string("!bench:example.org"),
                "type": .string("m.room.message"),
                "sender": .string("@alice:example.org"),
                "sender_display_name": .string("Alice"),
                "room_name": .string("Front Door"),
                "prio": .string("high"),
                "content": .object([
                    "msgtype": .string("m.text"),
                    "body": .string("A silver sedan pulled into the driveway and parked near the garage door."),
                ]),
                "counts": .object(["unread": .number(2)]),
                "devices": .array([
                    .object([
                        "app_id": .string(appId), "pushkey": .string(pushkey), "pushkey_ts": .number(1_700_000_000),
                        "data": .object([:]),
                    ])
                ]),
            ])
        ])
    }

    private func hex8(_ value: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}

extension Duration {
    /// The duration in seconds.
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
