import Foundation
import HeraldCore

/// What `herald-bench latency` registers before it measures, so that no cache of one answer can
/// pass it: `users` users with `devicesPerUser` iOS installations each (sends go to every
/// installation in turn), and `cameras` AOVIS cameras, camera `n` owned by user `n`, whose events
/// (one camera after the other) reach both of the owner's devices, where the second one's
/// preferences (`enabled_categories` without the events' `vehicle`) filter them out: each event
/// is rendered per device and sent to one.
struct LatencyFixture: Sendable {
    /// Every installation, in the order sends go to them.
    var installations: [String]
    /// The cameras, in the order their events come.
    var cameras: [String]

    /// Registers the fixture through the API, `concurrency` requests at a time.
    /// - Throws: ``BenchFailure`` when Herald refuses a request.
    static func register(
        _ api: BenchAPIClient, run: String, users: Int, devicesPerUser: Int, cameras: Int, concurrency: Int = 32
    ) async throws -> LatencyFixture {
        let users = max(1, users)
        let devicesPerUser = max(1, devicesPerUser)
        let cameras = min(max(0, cameras), users)
        let slots = users * devicesPerUser
        var installations = [String](repeating: "", count: slots)
        try await forEach(0..<slots, concurrency: concurrency) { slot in
            let (user, device) = slot.quotientAndRemainder(dividingBy: devicesPerUser)
            let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            let answer = try await api.post(
                "/v1/installations",
                .object([
                    "platform": .string("ios"), "token": .string(token), "user_id": .string("bench-\(run)-\(user)"),
                    "device_id": .string("bench-\(run)-\(user)-\(device)"),
                ]))
            guard answer.status == 201, case .string(let id) = answer.body?.objectValue?["id"] else {
                throw BenchFailure("registering a device answered \(answer.status): \(answer.text)")
            }
            return (slot, id)
        } collect: {
            installations[$0] = $1
        }
        // Owners' second devices do not want vehicle events (sends have no category: they pass).
        if devicesPerUser > 1 {
            let registered = installations
            try await forEach(0..<cameras, concurrency: concurrency) { user in
                let id = registered[user * devicesPerUser + 1]
                let answer = try await api.put(
                    "/v1/installations/\(id)/preferences",
                    .object(["enabled_categories": .array([.string("person"), .string("animal")])]))
                guard (200..<300).contains(answer.status) else {
                    throw BenchFailure("setting preferences answered \(answer.status): \(answer.text)")
                }
                return (user, "")
            } collect: { _, _ in
            }
        }
        var cameraIDs = [String](repeating: "", count: cameras)
        try await forEach(0..<cameras, concurrency: concurrency) { index in
            let camera = "bench-camera-\(run)-\(index)"
            let created = try await api.post("/api/internal/devices", .object(["id": .string(camera)]))
            guard created.status == 201 else {
                throw BenchFailure("creating a camera answered \(created.status): \(created.text)")
            }
            let owner = try await api.put(
                "/api/internal/devices/\(camera)/owners/bench-\(run)-\(index)", .object(["status": .string("ACTIVE")]))
            guard (200..<300).contains(owner.status) else {
                throw BenchFailure("granting a camera answered \(owner.status): \(owner.text)")
            }
            return (index, camera)
        } collect: {
            cameraIDs[$0] = $1
        }
        return LatencyFixture(installations: installations, cameras: cameraIDs)
    }

    /// Runs `body` for each index, at most `concurrency` at once, and collects each result in the
    /// caller's task.
    private static func forEach<Value: Sendable>(
        _ indices: Range<Int>, concurrency: Int, _ body: @escaping @Sendable (Int) async throws -> (Int, Value),
        collect: (Int, Value) -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: (Int, Value).self) { group in
            var next = indices.lowerBound
            while next < indices.upperBound, next - indices.lowerBound < concurrency {
                let index = next
                group.addTask { try await body(index) }
                next += 1
            }
            while let (index, value) = try await group.next() {
                collect(index, value)
                if next < indices.upperBound {
                    let index = next
                    group.addTask { try await body(index) }
                    next += 1
                }
            }
        }
    }
}
