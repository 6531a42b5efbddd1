import Foundation
import HeraldCore
import HeraldProviderMocks
import HeraldServer
import HeraldServerTestSupport
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import Testing

@testable import HeraldNtfy

/// The real senders against a live Herald: ntfy's documented curl requests and Apprise.
@Suite("ntfy publishing with its real senders: the documentation's curl requests and Apprise")
struct NtfyClientTests {
    static let topics = ["mytopic", "phil_alerts", "backups", "reminder", "mysecrets", "alerts"]

    @Test("ntfy's documented curl requests, with a publish key added (-u :KEY or a Bearer header), each 200 and pushed")
    func documentationCurl() async throws {
        try await PublishingHarness.withServer(channels: Self.topics) { harness, host, token in
            let key = ServerHarness.publishKey
            let bearer = "Authorization: Bearer \(key)"
            // docs.ntfy.sh/publish: the host replaced, authentication added.
            let requests: [[String]] = [
                ["-u", ":\(key)", "-d", "Backup successful 😀", "\(host)/mytopic"],
                [
                    "-H", bearer, "-H", "Title: Unauthorized access detected", "-H", "Priority: urgent", "-H",
                    "Tags: warning,skull", "-d", "Remote access to phils-laptop detected. Act right away.",
                    "\(host)/phil_alerts",
                ],
                ["-H", bearer, "-H", "X-Priority: 5", "-d", "An urgent message", "\(host)/phil_alerts"],
                ["-H", bearer, "-H", "p:4", "-d", "A high priority message", "\(host)/phil_alerts"],
                ["-H", bearer, "-H", "ta:dog", "-d", "Dogs are awesome", "\(host)/backups"],
                [
                    "-H", bearer, "-H", "Click: https://www.reddit.com/message/messages", "-d",
                    "New messages on Reddit",
                    "\(host)/mytopic",
                ],
                [
                    "-H", bearer, host, "-d",
                    """
                    {
                        "topic": "mytopic",
                        "message": "Disk space is low at 5.1 GB",
                        "title": "Low disk space alert",
                        "tags": ["warning","cd"],
                        "priority": 4,
                        "attach": "https://filesrv.lan/space.jpg",
                        "filename": "diskspace.jpg",
                        "click": "https://homecamera.lan/xasds1h2xsSsa/",
                        "actions": [{ "action": "view", "label": "Admin panel", "url": "https://filesrv.lan/admin" }]
                      }
                    """,
                ],
                ["-u", ":\(key)", "-d", "Look ma, with auth", "\(host)/mysecrets"],
                ["-H", bearer, "-H", "In: 30min", "-d", "It's 30 minutes later now", "\(host)/reminder"],
            ]
            for arguments in requests {
                let (body, status) = try await PublishingHarness.curl(arguments)
                #expect(status == 200, "curl \(arguments.joined(separator: " ")): \(body)")
                #expect(body.contains(#""event":"message""#), "\(body)")
            }
            let pushes = try await PublishingHarness.pushes(harness, to: token)
            #expect(pushes.count == requests.count - 1, "all but the delayed one, now")
            let urgent = try #require(
                pushes.first { $0["aps"]?["alert"]?["title"] == .string("Unauthorized access detected") })
            #expect(urgent["aps"]?["interruption-level"] == .string("time-sensitive"))
            #expect(urgent["tags"] == .array([.string("warning"), .string("skull")]))
            let disk = try #require(pushes.first { $0["aps"]?["alert"]?["title"] == .string("Low disk space alert") })
            #expect(disk["click"] == .string("https://homecamera.lan/xasds1h2xsSsa/"))
            #expect(
                disk["actions"]
                    == .array([
                        .object([
                            "action": .string("view"), "label": .string("Admin panel"),
                            "url": .string("https://filesrv.lan/admin"),
                        ])
                    ]))
            #expect(pushes.contains { $0["aps"]?["alert"]?["body"] == .string("Backup successful 😀") })
        }
    }

    @Test(
        "ntfy's documented sequence ids with curl: published, updated by the path and the header, cleared and deleted on the device, by the message id too"
    )
    func sequences() async throws {
        try await PublishingHarness.withServer(channels: Self.topics) { harness, host, token in
            let bearer = "Authorization: Bearer \(ServerHarness.publishKey)"
            // Each request's pushes are sent before the next request (a revision never overtakes).
            func curl(_ arguments: [String]) async throws -> [String: JSONValue] {
                let (body, status) = try await PublishingHarness.curl(["-H", bearer] + arguments)
                #expect(status == 200, "curl \(arguments.joined(separator: " ")): \(body)")
                _ = try await harness.drain()
                return try JSONValue.parse(Array(body.utf8)).objectValue ?? [:]
            }
            // docs.ntfy.sh/publish, "Updating + deleting notifications": the host replaced, a key added.
            let first = try await curl(["-d", "Downloading file...", "\(host)/mytopic/my-download-123"])
            #expect(first["sequence_id"] == .string("my-download-123"))
            let update = try await curl(["-d", "Download 50% ...", "\(host)/mytopic/my-download-123"])
            #expect(update["id"] != first["id"], "the update is a message (a revision) of its own")
            let header = try await curl(
                ["-H", "X-Sequence-ID: my-download-123", "-d", "Download complete", "\(host)/mytopic"])
            #expect(header["sequence_id"] == .string("my-download-123"))
            let key = "ntfy-mytopic-my-download-123"
            var pushes = try await PublishingHarness.pushes(harness, to: token)
            #expect(
                pushes.map { $0["aps"]?["alert"]?["body"] } == [
                    .string("Downloading file..."), .string("Download 50% ..."), .string("Download complete"),
                ])
            #expect(harness.apns.requests.allSatisfy { $0.header("apns-collapse-id") == key })
            let cleared = try await curl(["-X", "PUT", "\(host)/mytopic/my-download-123/clear"])
            #expect(cleared["event"] == .string("message_clear"))
            #expect(cleared["sequence_id"] == .string("my-download-123"))
            pushes = try await PublishingHarness.pushes(harness, to: token)
            #expect(pushes.last?[NotificationRevision.removalDataKey] == .string(key), "the removal names the key")
            // Cleared: deleting finds nothing left on the devices.
            let (gone, status) = try await PublishingHarness.curl(
                ["-H", bearer, "-X", "DELETE", "\(host)/mytopic/my-download-123"])
            #expect(status == 404, "\(gone)")
            #expect(gone.contains("40401"))
            // Published again, the sequence comes back: a new notification.
            let again = try await curl(["-d", "Downloading again...", "\(host)/mytopic/my-download-123"])
            #expect(again["id"] != first["id"])
            let deleted = try await curl(["-X", "DELETE", "\(host)/mytopic/my-download-123"])
            #expect(deleted["event"] == .string("message_delete"))

            // The message id as the sequence id, and the JSON form's sequence_id.
            let own = try await curl(
                [host, "-d", #"{"topic":"alerts","message":"Door open","sequence_id":"door"}"#])
            let ownID = try #require(own["id"]?.stringValue)
            _ = try await curl(["-d", "Door closed", "\(host)/alerts/\(ownID)"])
            pushes = try await PublishingHarness.pushes(harness, to: token)
            #expect(
                pushes.suffix(2).map { $0["aps"]?["alert"]?["body"] } == [.string("Door open"), .string("Door closed")])
            #expect(harness.apns.requests.last?.header("apns-collapse-id") == "ntfy-alerts-door")

            let (invalid, invalidStatus) = try await PublishingHarness.curl(
                ["-H", bearer, "-H", "X-Sequence-ID: not valid!", "-d", "x", "\(host)/mytopic"])
            #expect(invalidStatus == 400)
            #expect(invalid.contains("40049"), "\(invalid)")
        }
    }

    @Test(
        "Apprise's ntfy:// notifier: the token and Basic forms, its priority, tags and click options reach the device; a wrong key is refused and Apprise says so"
    )
    func apprise() async throws {
        try await PublishingHarness.withServer(channels: Self.topics) { harness, host, token in
            let key = ServerHarness.publishKey
            let sent = try await PublishingHarness.apprise(
                "ntfy://\(host)/alerts?token=\(key)&priority=high&tags=warning,door&click=https://cam.example.com/1",
                body: "Someone is at the door", title: "Front door")
            #expect(sent["ok"] == .bool(true), "\(sent)")
            let basic = try await PublishingHarness.apprise("ntfy://apprise:\(key)@\(host)/alerts", body: "Basic works")
            #expect(basic["ok"] == .bool(true), "\(basic)")
            let refused = try await PublishingHarness.apprise(
                "ntfy://\(host)/alerts?token=hpk_not-a-key-000000000", body: "no")
            #expect(refused["ok"] == .bool(false))
            #expect(refused["log"].map { "\($0)".contains("40101") } == true, "\(refused)")
            let pushes = try await PublishingHarness.pushes(harness, to: token)
            #expect(pushes.count == 2)
            let door = try #require(pushes.first)
            #expect(door["aps"]?["alert"]?["title"] == .string("Front door"))
            #expect(door["aps"]?["alert"]?["body"] == .string("Someone is at the door"))
            guard case .array(let tags)? = door["tags"] else { throw ConversationFailure("no tags: \(door)") }
            #expect(Set(tags) == [.string("warning"), .string("door")], "in Apprise's order")
            #expect(door["click"] == .string("https://cam.example.com/1"))
            #expect(door["priority"] == .number(4))
            #expect(pushes.last?["aps"]?["alert"]?["body"] == .string("Basic works"))
        }
    }
}
