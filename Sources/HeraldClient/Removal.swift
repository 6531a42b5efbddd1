import Foundation

#if canImport(UserNotifications)
    import UserNotifications
#endif

/// What removes an app's notifications from the device's notification center:
/// `UNUserNotificationCenter` on Apple platforms, or a stand-in of the app's.
public protocol NotificationCenterRemoving: AnyObject {
    /// Removes the notifications shown with these identifiers.
    func removeDeliveredNotifications(withIdentifiers identifiers: [String])
    /// Removes the notification requests waiting to be shown with these identifiers.
    func removePendingNotificationRequests(withIdentifiers identifiers: [String])
}

#if canImport(UserNotifications)
    extension UNUserNotificationCenter: NotificationCenterRemoving {}
#endif

// Removing a notification Herald sent (`DELETE /v1/notifications/{id}/delivered`, docs/content.md
// "Updating and deleting"). An updatable notification reaches iOS with its replacement key as
// `apns-collapse-id`, which iOS makes the notification request's identifier. Its removal is a
// background push `{"aps": {"content-available": 1}, "herald_remove": "<key>", "herald": {"id": …}}`, which
// the app hands to ``HeraldClient/handleRemoval(_:center:)``. iOS wakes an app for a background push
// when it sees fit, so a removal is best effort: the notification stays if the app is not woken.
extension HeraldClient {
    /// The replacement key a removal names, from a push's `userInfo`; nil for any other push.
    public static func removalKey(in userInfo: [AnyHashable: Any]) -> String? {
        guard let key = userInfo["herald_remove"] as? String, !key.isEmpty else { return nil }
        return key
    }

    /// Handles a push Herald sent: when it is a removal, removes the notification it names, shown or
    /// still waiting, and answers true. Call it from
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` with
    /// `UNUserNotificationCenter.current()`.
    /// - Returns: Whether the push was a removal (then it has nothing else to show).
    @discardableResult
    public static func handleRemoval(_ userInfo: [AnyHashable: Any], center: some NotificationCenterRemoving) -> Bool {
        guard let key = removalKey(in: userInfo) else { return false }
        center.removeDeliveredNotifications(withIdentifiers: [key])
        center.removePendingNotificationRequests(withIdentifiers: [key])
        return true
    }
}
