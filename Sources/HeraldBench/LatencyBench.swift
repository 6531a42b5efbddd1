import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// The latency from an accepted send (or AOVIS event) to the provider request, and the capacity it
/// allows: an open-loop generator sends single-user notifications to a running `herald serve` at a
/// fixed rate, scheduled by intended start time so a slow answer never delays the next send (no
/// coordinated omission), while a ``ReceiptSink`` in the same process stands in for APNs and notes
/// when each one arrives, on the same monotonic clock. Without `--rate` it searches each route's
/// capacity (see ``LatencySearch``); with it, it runs that one rate.
/// `bench/latency.sh` starts Herald with its APNs URL on the sink's port and runs this.
struct LatencyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency",
        abstract: "Latency from an accepted send or event to the APNs request, and the capacity within a bound.",
        discussion: """
            Registers users with two devices each and AOVIS cameras with one owner each, then per route either \
            searches the highest rate at which the p99 of (APNs receipt - accepted answer) stays within the bound, \
            every notification reaches APNs and none is later than one second after the step (no --rate), or runs \
            the given rate. Prints each step's percentiles and Herald's CPU per notification, then one JSON line.
            """)

    /// What the generator sends.
    enum Route: String, ExpressibleByArgument, CaseIterable {
        /// `POST /v1/notifications` to one installation id (`202`), the installations in turn.
        case send
        /// AOVIS `POST /api/internal/events` (`201`), the cameras in turn.
        case event
    }

    @Option(help: "Herald's base URL.") var herald: String
    @Option(help: "The app's server key.") var serverKey: String
    @Option(help: "Herald's process id, to measure its CPU time per notification.") var heraldPid: Int?
    @Option(help: "Port the APNs stand-in listens on (Herald's app.<id>.apns.url).") var sinkPort: Int
    @Option(help: "PEM certificate chain of the APNs stand-in.") var sinkCertificate: String
    @Option(help: "PEM private key of the APNs stand-in.") var sinkKey: String
    @Option(help: "Requests per second: run this one rate instead of searching the capacity.") var rate: Double?
    @Option(help: "Seconds measured per step (at least 20 when searching).") var seconds = 20.0
    @Option(help: "The search's first rate.") var startRate = 1000.0
    @Option(help: "The search's highest rate.") var maxRate = 20000.0
    @Option(help: "The p99 bound of (APNs receipt - accepted answer), in milliseconds.") var p99 = 10.0
    @Option(help: "Seconds sent at the first rate before measuring (not counted).") var warmup = 3.0
    @Option(help: "Seconds to wait for the last provider requests of a step.") var drain = 10.0
    @Option(help: "Users registered, each with --devices-per-user installations.") var users = 5000
    @Option(help: "Installations per user.") var devicesPerUser = 2
    @Option(help: "AOVIS cameras, camera n owned by user n.") var cameras = 1000
    @Option(help: "Routes to measure, one after the other.") var route: [Route] = [.send, .event]
    @Option(
        help: """
            Seconds of `GET /healthz` at each step's rate after the step (0: none): Herald's CPU per bare HTTP \
            request, the floor each notification's CPU is compared to.
            """)
    var floorSeconds = 5.0

    func run() async throws {
        let sink = try await ReceiptSink.start(port: sinkPort, certificateFile: sinkCertificate, keyFile: sinkKey)
        var clientConfiguration = HTTPClient.Configuration()
        // Open loop: requests are never queued in the client waiting for a connection.
        clientConfiguration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 512)
        let client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
        do {
            try await measure(BenchAPIClient(client: client, base: herald, serverKey: serverKey), sink: sink)
        } catch {
            try? await client.shutdown()
            await sink.shutdown()
            throw error
        }
        try await client.shutdown()
        await sink.shutdown()
    }

    private func measure(_ api: BenchAPIClient, sink: ReceiptSink) async throws {
        let run = String(UInt32.random(in: .min ... .max), radix: 16)
        let setUp = ContinuousClock.now
        let fixture = try await LatencyFixture.register(
            api, run: run, users: users, devicesPerUser: devicesPerUser, cameras: route.contains(.event) ? cameras : 0)
        print(
            "== registered \(fixture.installations.count) installations of \(users) users and "
                + "\(fixture.cameras.count) cameras in \(ContinuousClock.now - setUp)")
        let cpu = heraldPid.map(ProcessCPU.init(pid:))
        var results: [String: JSONValue] = [:]
        for selected in route {
            func generator(_ rate: Double, _ floor: Bool) -> LatencyGenerator {
                LatencyGenerator(api: api, route: selected, fixture: fixture, rate: rate, floor: floor)
            }
            let first = rate ?? startRate
            print("== \(selected.rawValue): warm-up, \(warmup) s at \(first)/s")
            _ = await generator(first, false).run(
                prefix: "\(run)-\(selected.rawValue)-w", seconds: warmup, sink: sink, drain: drain)
            let search = LatencySearch(
                generator: generator, sink: sink, seconds: rate == nil ? max(20, seconds) : seconds,
                bound: .microseconds(Int64(p99 * 1000)), settle: .seconds(1), cpu: cpu, floorSeconds: floorSeconds)
            let prefix = "\(run)-\(selected.rawValue)-m"
            if let rate {
                print("== \(selected.rawValue): \(search.seconds) s at \(rate)/s")
                let step = await search.step(rate, prefix: prefix, drain: drain)
                print(step.summary.text)
                print(step.line)
                results[selected.rawValue] = step.json
                continue
            }
            print("== \(selected.rawValue): capacity at p99 <= \(p99) ms, \(search.seconds) s per step")
            let steps = await search.run(start: startRate, maximum: maxRate, prefix: prefix, drain: drain) { step in
                print(step.line)
            }
            let best = steps.filter(\.passed).max { $0.rate < $1.rate }
            if let best {
                print("== \(selected.rawValue) capacity: \(best.line)")
            } else {
                print("== \(selected.rawValue) capacity: no step passed")
            }
            results[selected.rawValue] = .object([
                "capacity": best.map { .number(JSONNumber($0.rate)) } ?? .null,
                "steps": .array(steps.map(\.json)),
            ])
        }
        let anomalies = sink.anomalies
        results["sink_duplicates"] = .number(JSONNumber(anomalies.duplicates))
        results["sink_unmarked"] = .number(JSONNumber(anomalies.unmarked))
        print(String(decoding: JSONValue.object(results).serialized(), as: UTF8.self))
    }
}

extension LatencySearch.Step {
    /// The step as the JSON line reports it.
    var json: JSONValue {
        var object: [String: JSONValue] = [
            "rate": .number(JSONNumber(rate)), "passed": .bool(passed), "summary": summary.json,
        ]
        func microseconds(_ duration: Duration) -> JSONValue {
            .number(JSONNumber((duration / .microseconds(1)).rounded()))
        }
        if let cpuPerNotification { object["cpu_us_per_notification"] = microseconds(cpuPerNotification) }
        if let cpuPerHealthz { object["cpu_us_per_healthz"] = microseconds(cpuPerHealthz) }
        if let benchCPUPerRequest { object["bench_cpu_us_per_request"] = microseconds(benchCPUPerRequest) }
        if let failure { object["failure"] = .string(failure) }
        return .object(object)
    }
}

/// A failure of the benchmark's own set-up or run, with what went wrong.
struct BenchFailure: Error, CustomStringConvertible {
    /// What went wrong.
    let description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Herald's HTTP API as the generator uses it: JSON in, status and JSON out, the server key on every request.
struct BenchAPIClient: Sendable {
    /// An answer: its status, its body parsed when it is JSON, its text, and when its head arrived.
    struct Answer: Sendable {
        var status: Int
        var body: JSONValue?
        var text: String
        var headReceivedAt: ContinuousClock.Instant
    }

    let client: HTTPClient
    let base: String
    let serverKey: String

    func post(_ path: String, _ body: JSONValue) async throws -> Answer {
        try await request(.POST, path, body)
    }

    func put(_ path: String, _ body: JSONValue) async throws -> Answer {
        try await request(.PUT, path, body)
    }

    /// Sends the request and reads the whole answer.
    /// - Throws: When the connection fails or no answer comes within 30 seconds.
    func request(_ method: HTTPMethod, _ path: String, _ body: JSONValue?) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(serverKey)")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let headReceivedAt = ContinuousClock.now
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(
            status: Int(response.status.code), body: try? JSONValue.parse(bytes.readableBytesView),
            text: String(buffer: bytes), headReceivedAt: headReceivedAt)
    }
}
