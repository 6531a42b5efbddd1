import Foundation
import HeraldCore

/// The direct channel as a transport: devices connected to Herald itself, on this node or another
/// (``DirectChannels``). The engine offers it, before their own service, every push to a device
/// with a channel open anywhere, and every push to a direct-only device (service `direct`); what it
/// does not settle comes back as a ``TransportResult/Handback``: waiting for the device's
/// confirmation, or fallen back to the device's cloud route.
public struct DirectTransport: Transport {
    public let channels: DirectChannels

    /// The direct route over a node's channels.
    public init(channels: DirectChannels) {
        self.channels = channels
    }

    public var service: PushService { .direct }

    /// A channel event has no provider limit (one too large to relay to another node falls back).
    public func validate(_ notification: PushNotification, now: Date) throws(HeraldError) {}

    /// The channels close with their sockets, not with the transport.
    public func shutdown() async {}

    /// Which of the pushes this route takes first: those to a direct-only device, and those to a
    /// device with a channel open here or on another node (unless the push already fell back from a
    /// channel: then its cloud route takes it). Nil when none (no channel open anywhere and no
    /// direct-only device: a broadcast skips the split).
    /// - Returns: For each push whether the channel takes it, and the other nodes holding channels.
    /// - Parameter channelOnly: Services whose pushes only the channel can carry (a payload too
    ///   large for them that waits for the channel): taken as a direct-only device's.
    func route(
        _ pushes: [OutgoingPush], channelOnly: Set<PushService> = [], now: Date
    ) async -> (viaChannel: [Bool], holders: [String: String])? {
        let anyOpen = await channels.anyOpenAnywhere(now: now)
        let onlyChannel = { (push: OutgoingPush) in
            push.recipient.service == .direct || channelOnly.contains(push.recipient.service)
        }
        guard anyOpen || pushes.contains(where: onlyChannel) else { return nil }
        var holders: [String: String] = [:]
        if anyOpen {
            let elsewhere = pushes.compactMap { push -> String? in
                guard push.recipient.channelSettlement == nil, let id = push.recipient.installationID else {
                    return nil
                }
                return channels.isOpen(id) ? nil : id
            }
            holders = await channels.remoteHolders(of: elsewhere, now: now)
        }
        let viaChannel = pushes.map { push -> Bool in
            if onlyChannel(push) { return push.recipient.installationID != nil }
            guard push.recipient.channelSettlement == nil, let id = push.recipient.installationID else { return false }
            return channels.isOpen(id) || holders[id] != nil
        }
        guard viaChannel.contains(true) else { return nil }
        return (viaChannel, holders)
    }

    public func send(_ pushes: [OutgoingPush], of notification: PushNotification, now: Date) async -> [TransportResult]
    {
        await send(pushes, of: notification, holders: [:])
    }

    /// Writes each push to its device's channel, all at once.
    /// - Parameter holders: The nodes holding channels elsewhere, as ``route(_:now:)`` read them
    ///   (one not in it is looked up).
    func send(
        _ pushes: [OutgoingPush], of notification: PushNotification, holders: [String: String]
    ) async -> [TransportResult] {
        await withTaskGroup(of: (Int, TransportResult).self) { group in
            var results = [TransportResult](repeating: .handedBack(.fellBack(reason: nil)), count: pushes.count)
            for (index, push) in pushes.enumerated() {
                guard let installationID = push.recipient.installationID else { continue }
                let event = ChannelEvent.render(notification, badge: push.badge)
                let holder = holders[installationID]
                group.addTask {
                    let outcome = await channels.deliver(
                        event, to: installationID, notificationID: notification.id, holder: holder)
                    return (index, Self.result(outcome))
                }
            }
            for await (index, result) in group { results[index] = result }
            return results
        }
    }

    /// A channel's outcome as a transport result.
    static func result(_ outcome: DirectChannels.Outcome) -> TransportResult {
        switch outcome {
        case .delivered(let confirmed):
            TransportResult(.delivered(providerID: confirmed ? "direct:confirmed" : "direct"))
        case .confirming(let until): .handedBack(.confirming(until: until))
        case .fellBack(let reason): .handedBack(.fellBack(reason: reason))
        case .notConnected: .handedBack(.fellBack(reason: nil))
        }
    }
}
