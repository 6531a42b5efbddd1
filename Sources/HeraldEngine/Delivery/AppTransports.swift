import Foundation
import HeraldCore

/// The transports of one app, by the service each delivers through.
public struct AppTransports: Sendable {
    /// The app's transports by service.
    public let transports: [PushService: any Transport]

    /// Creates an app's transports; a later transport of the same service replaces an earlier one.
    /// Deliveries to a service without one fail with a configuration failure.
    public init(_ transports: [any Transport]) {
        var byService: [PushService: any Transport] = [:]
        for transport in transports { byService[transport.service] = transport }
        self.transports = byService
    }

    /// The services this app has a transport for.
    public var services: Set<PushService> { Set(transports.keys) }

    /// Closes every transport's connections.
    public func shutdown() async {
        for transport in transports.values { await transport.shutdown() }
    }

    /// Checks that the notification fits the limit of every one of `services` the app has a
    /// transport for.
    /// - Throws: `HeraldError` `payload_too_large` naming the provider and the size.
    func validate(_ notification: PushNotification, services: Set<PushService>, now: Date) throws(HeraldError) {
        for service in PushService.allCases where services.contains(service) {
            guard let transport = transports[service], transport.isConfigured else { continue }
            try transport.validate(notification, now: now)
        }
    }

    /// The app's configured services whose provider cannot carry the notification (its payload is
    /// too large for them).
    func tooSmall(for notification: PushNotification, now: Date) -> Set<PushService> {
        var services: Set<PushService> = []
        for (service, transport) in transports where service != .direct && transport.isConfigured {
            do throws(HeraldError) {
                try transport.validate(notification, now: now)
            } catch  where error.code == "payload_too_large" {
                services.insert(service)
            } catch {}
        }
        return services
    }

    /// The transport that manages the app's Live Activity broadcast channels, if it has one.
    var liveActivityChannels: (any LiveActivityChannels)? { transports[.apns] as? any LiveActivityChannels }

    /// The broadcast route a notification to everyone takes, if one of the app's transports
    /// offers one for it and the target admits its service.
    func broadcastRecipient(for notification: PushNotification) -> Recipient? {
        // A Live Activity channel's broadcast: one push to APNs reaches every subscriber.
        if case .liveActivityChannel = notification.target.audience, let channel = notification.liveActivity?.channel {
            return Recipient(broadcastTo: channel, service: .apns).routed(by: notification.target)
        }
        guard case .all = notification.target.audience else { return nil }
        for service in PushService.allCases where notification.target.services?.contains(service) ?? true {
            if let route = transports[service] as? any BroadcastRoute,
                let address = route.broadcastAddress(for: notification)
            {
                return Recipient(broadcastTo: address, service: service)
            }
        }
        return nil
    }

    /// Sends pushes through their services' transports, concurrently, and returns each one's result
    /// in order.
    func send(_ pushes: [OutgoingPush], of notification: PushNotification, now: Date) async -> [TransportResult] {
        // One service (the one-user case, most pages): sent from this task, no child task.
        if let service = pushes.first?.recipient.service, let transport = transports[service],
            pushes.allSatisfy({ $0.recipient.service == service })
        {
            return await transport.send(pushes, of: notification, now: now)
        }
        var results = [TransportResult?](repeating: nil, count: pushes.count)
        let byService = Dictionary(grouping: pushes.indices, by: { pushes[$0].recipient.service })
        await withTaskGroup(of: [(Int, TransportResult)].self) { group in
            for (service, indices) in byService {
                guard let transport = transports[service] else {
                    let failure = TransportResult(
                        .configurationFailure(reason: "The app has no \(service.rawValue) transport configured"))
                    for index in indices { results[index] = failure }
                    continue
                }
                group.addTask {
                    await transport.send(indices.map { pushes[$0] }, of: notification, now: now)
                        .enumerated().map { (indices[$0.offset], $0.element) }
                }
            }
            for await batch in group { for (index, result) in batch { results[index] = result } }
        }
        return results.map { $0 ?? TransportResult(.retry(reason: "no result", after: nil)) }
    }
}

extension AppTransports {
    /// Renders and sends one notification to one token, outside any job (`herald send --direct`).
    public func send(
        _ notification: PushNotification, token: String, service: PushService, environment: PushEnvironment,
        platform: Platform, now: Date = Date()
    ) async -> DeliveryOutcome {
        let recipient = Recipient(
            rawToken: .init(token: token, service: service, environment: environment, platform: platform), index: 0)
        let push = OutgoingPush(
            recipient: recipient,
            badge: notification.payload.badge.flatMap { if case .set(let value) = $0 { value } else { 1 } },
            soundEnabled: true)
        return await send([push], of: notification, now: now).first?.outcome
            ?? .retry(reason: "no answer", after: nil)
    }
}
