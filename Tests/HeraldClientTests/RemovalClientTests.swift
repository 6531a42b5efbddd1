import Foundation
import Testing

@testable import HeraldClient

/// HeraldClient's handler of a removal push, with the `userInfo` iOS hands the app: the APNs
/// payload's JSON as Foundation objects.
@Suite("HeraldClient removes the notification a removal push names")
struct RemovalClientTests {
    /// A notification center that records what it is asked to remove.
    final class RecordingCenter: NotificationCenterRemoving {
        var delivered: [[String]] = []
        var pending: [[String]] = []

        func removeDeliveredNotifications(withIdentifiers identifiers: [String]) { delivered.append(identifiers) }
        func removePendingNotificationRequests(withIdentifiers identifiers: [String]) { pending.append(identifiers) }
    }

    /// The `userInfo` of an APNs payload.
    static func userInfo(_ json: String) throws -> [AnyHashable: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [AnyHashable: Any])
    }

    @Test("A removal removes the shown and the waiting notification of its key, once")
    func removal() throws {
        let center = RecordingCenter()
        let push = try Self.userInfo(
            #"{"aps":{"content-available":1},"herald_remove":"herald-01j-sent","herald":{"id":"01j-change"}}"#)
        #expect(HeraldClient.removalKey(in: push) == "herald-01j-sent")
        #expect(HeraldClient.handleRemoval(push, center: center))
        #expect(center.delivered == [["herald-01j-sent"]])
        #expect(center.pending == [["herald-01j-sent"]])
    }

    @Test(
        "Any other push is left alone",
        arguments: [
            #"{"aps":{"alert":{"title":"Score","body":"1:0"}},"herald":{"id":"01j-sent"}}"#,
            #"{"aps":{"content-available":1},"herald_remove":"","herald":{"id":"01j"}}"#,
            #"{"aps":{"content-available":1},"herald_remove":7,"herald":{"id":"01j"}}"#,
            #"{"aps":{"content-available":1},"herald":{"id":"01j","remove":"herald-01j"}}"#,
        ])
    func otherPushes(_ json: String) throws {
        let center = RecordingCenter()
        #expect(HeraldClient.handleRemoval(try Self.userInfo(json), center: center) == false)
        #expect(center.delivered.isEmpty && center.pending.isEmpty)
    }
}
