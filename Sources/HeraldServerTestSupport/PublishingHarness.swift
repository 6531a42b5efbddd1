import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldServer
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting

/// The publish APIs' tests with their real senders (curl, Apprise): a live Herald (a real port)
/// delivering to the mock APNs, with one iPhone subscribed to the channels the test publishes to.
package enum PublishingHarness {
    /// Runs `test` with the harness, the server's `host:port` and the device's APNs token.
    package static func withServer(
        channels: [String], userID: String? = nil,
        _ test: @Sendable (EngineHarness, String, String) async throws -> Void
    ) async throws {
        let harness = try await EngineHarness()
        try await harness.live { api, port in
            let token = Fixtures.apnsToken()
            var registration: [String: JSONValue] = [
                "platform": .string("ios"), "token": .string(token), "channels": .array(channels.map(JSONValue.string)),
            ]
            registration["user_id"] = userID.map(JSONValue.string)
            let created = try await api.call(
                .post, "/v1/installations",
                body: String(decoding: JSONValue.object(registration).serialized(), as: UTF8.self))
            guard created.status == .created else {
                throw TestFailure("the device was not registered: \(created.status)")
            }
            try await test(harness, "127.0.0.1:\(port)", token)
        }
    }

    /// The device's pushes, once the engine has worked every due job.
    package static func pushes(_ harness: EngineHarness, to token: String) async throws -> [JSONValue] {
        _ = try await harness.drain()
        return harness.apns.requests.filter { $0.token == token }.compactMap(\.json)
    }

    /// One notification through `scripts/apprise-send.py` (Apprise, in `.python/tools`).
    package static func apprise(_ url: String, body: String, title: String? = nil) async throws -> [String: JSONValue] {
        var arguments = try TestPython.tools.command(
            TestPython.script("apprise-send.py"), ["--url", url, "--body", body])
        if let title { arguments += ["--title", title] }
        let (status, output, errors) = try await ScriptProcess.run(arguments)
        guard status == 0, let object = try? JSONValue.parse(Array(output.utf8)).objectValue else {
            throw TestFailure("apprise-send.py failed (\(status)): \(output) \(errors)")
        }
        return object
    }

    /// Runs curl with `arguments` (`-sS`, the status on a last line of its own).
    /// - Returns: The body and the status.
    package static func curl(_ arguments: [String]) async throws -> (body: String, status: Int) {
        let (code, output, errors) = try await ScriptProcess.run(["curl", "-sS", "-w", "\n%{http_code}"] + arguments)
        guard code == 0, let newline = output.lastIndex(of: "\n"),
            let status = Int(output[output.index(after: newline)...])
        else { throw TestFailure("curl \(arguments.joined(separator: " ")) failed (\(code)): \(output) \(errors)") }
        return (String(output[..<newline]), status)
    }
}
