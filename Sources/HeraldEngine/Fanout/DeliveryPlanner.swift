import Foundation
import HeraldCore

/// Decides, for one recipient of a notification at one instant, whether to send now, wait, or
/// skip — expiry, device-local push time, the device's preferences and provider pauses, in that
/// order. Pure: every input is given, so it is tested without a store, a socket or a clock.
struct DeliveryPlanner: Sendable {
    /// What to do with one recipient now.
    enum Plan: Equatable {
        /// Send, with sound or without (the device's `sound_enabled`).
        case send(soundEnabled: Bool)
        /// The notification expired before this recipient's turn.
        case expired
        /// Not now: wait until the date (local push time, end of quiet hours, end of a provider pause).
        case wait(until: Date, PendingDelivery.Reason)
        /// The device's preferences filter it out, for this reason.
        case skip(reason: String)
    }

    let notification: PushNotification
    /// The notification's push time, parsed once.
    let pushTime: PushTime?

    /// A planner for one notification.
    /// - Throws: `HeraldError` when the stored push time does not parse.
    init(_ notification: PushNotification) throws(HeraldError) {
        self.notification = notification
        pushTime = try notification.pushTime.map { (text) throws(HeraldError) in
            try PushTime(parsing: text, field: "push_time")
        }
    }

    /// The plan for one recipient.
    /// - Parameters:
    ///   - preferences: The installation's stored preferences, when it has some and the notification respects them.
    ///   - pausedUntil: Until when the recipient's provider is paused for the app, if it is.
    func plan(for recipient: Recipient, preferences: Preferences?, pausedUntil: Date?, now: Date) -> Plan {
        if let expiresAt = notification.expiresAt, now >= expiresAt { return .expired }
        if let pushTime, !pushTime.isInstant {
            let zone = recipient.timezone.flatMap(TimeZone.init(identifier:)) ?? .gmt
            let due = pushTime.instant(in: zone)
            if due > now { return .wait(until: due, .localTime) }
        }
        var soundEnabled = true
        if let rules = preferences {
            switch rules.decide(
                source: notification.source, category: notification.preferenceCategory,
                interruptionLevel: notification.payload.interruptionLevel?.rawValue,
                installationTimeZone: recipient.timezone, now: now)
            {
            case .skip(let reason): return .skip(reason: reason)
            case .deferUntil(let date): return .wait(until: date, .quietHours)
            case .deliver(let sound): soundEnabled = sound
            }
        }
        if let pausedUntil { return .wait(until: pausedUntil, .providerPaused) }
        return .send(soundEnabled: soundEnabled)
    }
}

extension PushTime {
    /// Whether the time is one instant for every device (not a device-local time).
    var isInstant: Bool {
        if case .instant = self { return true }
        return false
    }
}
