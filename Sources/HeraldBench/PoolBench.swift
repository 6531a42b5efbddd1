import ArgumentParser
import Crypto
import Foundation
import HeraldAPNs
import HeraldCore
import NIOCore
import NIOSSL

/// Drives notifications through Herald's APNs client and HTTP/2 pool against a sink, and prints
/// one JSON line with the rate and the CPU spent. `bench/pool.sh` runs it beside h2load.
struct PoolBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pool", abstract: "Measure the APNs pool against an HTTP/2 sink.")

    @Option(help: "Sink host.") var host = "127.0.0.1"
    @Option(help: "Sink port.") var port: Int
    @Option(help: "PEM file of the CA that signed the sink's certificate.") var ca: String
    @Option(help: "Notifications to send.") var count = 200_000
    @Option(help: "Connections in the pool.") var connections = 2
    @Option(help: "Streams open per connection.") var streams = 100
    @Option(help: "Notifications in flight at once.") var concurrency = 2_000
    @Option(help: "Notifications per batch handed to the client (1: one send call each).") var batch = 100

    func run() async throws {
        let key = try APNsSigningKey(
            teamID: "BENCHTEAM1", keyID: "BENCHKEY01", pem: P256.Signing.PrivateKey().pemRepresentation)
        let client = try APNsClient(
            configuration: APNsConfiguration(
                environment: .custom(host: host, port: port), authentication: .token(key),
                trustRoots: try NIOSSLCertificate.fromPEMFile(ca), connections: connections,
                maxStreamsPerConnection: streams))
        let token = String(repeating: "ab", count: 32)
        // A realistic camera-event alert, about 300 bytes.
        let payload = APNsPayload(
            alert: .fields(
                .init(
                    title: "Vehicle detected at Front Door",
                    body: "A silver sedan pulled into the driveway and parked near the garage door.")),
            sound: .named("default"), mutableContent: true,
            custom: [
                "deepLink": .string("aovis://event/018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b"),
                "cloudEventId": .string("018f2b6e-5a4c-7b1d-9f3e-2c4d5e6f7a8b"),
                "deviceId": .string("aovis-n4k-7f3a9c"), "eventType": .string("vehicle"),
            ]
        ).bytes
        let notification = APNsNotification(deviceToken: token, bundleID: "com.example.herald", payload: payload)

        // Warm up: connections, TLS, the provider token.
        for _ in 0..<connections * 10 { _ = try await client.send(notification) }

        let cpuBefore = Self.cpuSeconds()
        let start = ContinuousClock.now
        let batchSize = max(1, batch)
        let batches = (count + batchSize - 1) / batchSize
        let sizes = (0..<batches).map { min(batchSize, count - $0 * batchSize) }
        var delivered = 0
        var failed = 0
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0
            let parallel = max(1, concurrency / batchSize)
            while next < min(parallel, batches) {
                let size = sizes[next]
                group.addTask { await Self.deliveredCount(client, notification, size) }
                next += 1
            }
            while let ok = try await group.next() {
                delivered += ok
                if next < batches {
                    let size = sizes[next]
                    group.addTask { await Self.deliveredCount(client, notification, size) }
                    next += 1
                }
            }
        }
        failed = count - delivered
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpu = Self.cpuSeconds() - cpuBefore
        await client.shutdown()
        let result: [String: JSONValue] = [
            "notifications": .number(JSONNumber(count)), "delivered": .number(JSONNumber(delivered)),
            "failed": .number(JSONNumber(failed)), "payload_bytes": .number(JSONNumber(payload.count)),
            "seconds": .number(JSONNumber((seconds * 1000).rounded() / 1000)),
            "rate": .number(JSONNumber((Double(delivered) / seconds).rounded())),
            "cpu_seconds": .number(JSONNumber((cpu * 1000).rounded() / 1000)),
            "cpu_seconds_per_1000": .number(JSONNumber((cpu / Double(count) * 1_000_000).rounded() / 1000)),
        ]
        print(String(decoding: JSONValue.object(result).serialized(), as: UTF8.self))
    }

    /// Sends `size` copies (one at a time for a size of 1, else as one batch) and counts deliveries.
    private static func deliveredCount(
        _ client: APNsClient, _ notification: APNsNotification, _ size: Int
    ) async
        -> Int
    {
        let results: [Result<APNsResponse, APNsError>]
        if size == 1 {
            do {
                results = [.success(try await client.send(notification))]
            } catch {
                results = [.failure(error)]
            }
        } else {
            results = await client.send(batch: Array(repeating: notification, count: size))
        }
        return results.reduce(0) { total, result in
            if case .success(let response) = result, case .delivered = response.outcome { return total + 1 }
            return total
        }
    }

    /// User plus system CPU time of this process.
    private static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
