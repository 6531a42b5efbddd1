import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// The latency from an accepted send (or AOVIS event) to the provider request: an open-loop generator sends
/// single-device notifications to a running `herald serve` at a fixed rate, scheduled by intended start time so
/// a slow answer never delays the next send (no coordinated omission), while a ``ReceiptSink`` in the same
/// process stands in for APNs and notes when each one arrives, on the same monotonic clock.
/// `bench/latency.sh` starts Herald with its APNs URL on the sink's port and runs this.
struct LatencyBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency",
        abstract: "Latency from an accepted send or event to the APNs request, at a fixed rate.",
        discussion: """
            Prints, per route, percentiles of (APNs receipt - accepted answer received), of (APNs receipt - \
            intended request start) and of (answer - intended start), the achieved rate and the errors, then \
            one JSON line.
            """)

    /// What the generator sends.
    enum Route: String, ExpressibleByArgument, CaseIterable {
        /// `POST /v1/notifications` to one installation id (`202`).
        case send
        /// AOVIS `POST /api/internal/events` for a camera with one owner and one device (`201`).
        case event
    }

    @Option(help: "Herald's base URL.") var herald: String
    @Option(help: "The app's server key.") var serverKey: String
    @Option(help: "Port the APNs stand-in listens on (Herald's app.<id>.apns.url).") var sinkPort: Int
    @Option(help: "PEM certificate chain of the APNs stand-in.") var sinkCertificate: String
    @Option(help: "PEM private key of the APNs stand-in.") var sinkKey: String
    @Option(help: "Requests per second.") var rate = 1000.0
    @Option(help: "Seconds measured per route.") var seconds = 30.0
    @Option(help: "Seconds sent at the rate before measuring (not counted).") var warmup = 3.0
    @Option(help: "Seconds to wait for the last provider requests.") var drain = 15.0
    @Option(help: "Installations registered; sends go to them in turn.") var devices = 100
    @Option(help: "Routes to measure, one after the other.") var route: [Route] = [.send, .event]

    func run() async throws {
        let sink = try await ReceiptSink.start(port: sinkPort, certificateFile: sinkCertificate, keyFile: sinkKey)
        var clientConfiguration = HTTPClient.Configuration()
        // Open loop: requests are never queued in the client waiting for a connection.
        clientConfiguration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 512)
        let client = HTTPClient(
            eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: clientConfiguration)
        do {
            let api = HeraldAPI(client: client, base: herald, serverKey: serverKey)
            let run = String(UInt32.random(in: .min ... .max), radix: 16)
            let installations = try await register(api, run: run)
            let camera = try await makeCamera(api, run: run)
            var results: [String: JSONValue] = [:]
            for selected in route {
                let generator = LatencyGenerator(
                    api: api, route: selected, installations: installations, camera: camera, rate: rate)
                print("== \(selected.rawValue): warm-up, \(warmup) s at \(rate)/s")
                _ = await generator.run(
                    prefix: "\(run)-\(selected.rawValue)-w", seconds: warmup, sink: sink, drain: drain)
                print("== \(selected.rawValue): \(seconds) s at \(rate)/s")
                let phase = await generator.run(
                    prefix: "\(run)-\(selected.rawValue)-m", seconds: seconds, sink: sink, drain: drain)
                let summary = LatencySummary(phase: phase, sink: sink)
                print(summary.text)
                results[selected.rawValue] = summary.json
            }
            let anomalies = sink.anomalies
            results["sink_duplicates"] = .number(JSONNumber(anomalies.duplicates))
            results["sink_unmarked"] = .number(JSONNumber(anomalies.unmarked))
            print(String(decoding: JSONValue.object(results).serialized(), as: UTF8.self))
        } catch {
            try? await client.shutdown()
            await sink.shutdown()
            throw error
        }
        try await client.shutdown()
        await sink.shutdown()
    }

    /// Registers `devices` iOS installations of users `bench-<run>-<n>` and returns their ids.
    private func register(_ api: HeraldAPI, run: String) async throws -> [String] {
        var ids: [String] = []
        for index in 0..<max(1, devices) {
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            let answer = try await api.post(
                "/v1/installations",
                .object([
                    "platform": .string("ios"), "token": .string(token), "user_id": .string("bench-\(run)-\(index)"),
                ]))
            guard answer.status == 201, case .string(let id) = answer.body?.objectValue?["id"] else {
                throw BenchFailure("registering a device answered \(answer.status): \(answer.text)")
            }
            ids.append(id)
        }
        return ids
    }

    /// Creates an AOVIS camera owned (ACTIVE) by the first device's user, so its events notify that one device.
    private func makeCamera(_ api: HeraldAPI, run: String) async throws -> String {
        let camera = "bench-camera-\(run)"
        let created = try await api.post("/api/internal/devices", .object(["id": .string(camera)]))
        guard created.status == 201 else {
            throw BenchFailure("creating the camera answered \(created.status): \(created.text)")
        }
        let owner = try await api.put(
            "/api/internal/devices/\(camera)/owners/bench-\(run)-0", .object(["status": .string("ACTIVE")]))
        guard (200..<300).contains(owner.status) else {
            throw BenchFailure("granting the camera answered \(owner.status): \(owner.text)")
        }
        return camera
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
struct HeraldAPI: Sendable {
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
    func request(_ method: HTTPMethod, _ path: String, _ body: JSONValue) async throws -> Answer {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(serverKey)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: body.serialized()))
        let response = try await client.execute(request, timeout: .seconds(30))
        let headReceivedAt = ContinuousClock.now
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(
            status: Int(response.status.code), body: try? JSONValue.parse(bytes.readableBytesView),
            text: String(buffer: bytes), headReceivedAt: headReceivedAt)
    }
}
