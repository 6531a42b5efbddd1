import Foundation
import HeraldCore
import HeraldHTTP2

/// Apple Push Notification service: one client per environment (their hosts differ), the unified
/// payload rendered by ``APNsRenderer``, and APNs' answers mapped to outcomes.
public struct APNsTransport: Transport {
    public var service: PushService { .apns }

    /// The client for production tokens; nil when not configured (its deliveries fail).
    public let production: APNsClient?
    /// The client for sandbox tokens; nil when not configured.
    public let sandbox: APNsClient?
    /// The topic of installations without a bundle id (and of the app's broadcast channels).
    public let topic: String?
    /// The channel management clients by environment (nil: broadcast channels are not managed).
    public let channels: (production: APNsChannelClient?, sandbox: APNsChannelClient?)

    /// Creates the transport; with no client it fails deliveries with a configuration failure (and
    /// does not refuse payloads: ``isConfigured`` is false).
    public init(
        production: APNsClient?, sandbox: APNsClient?, topic: String?,
        channels: (production: APNsChannelClient?, sandbox: APNsChannelClient?) = (nil, nil)
    ) {
        self.production = production
        self.sandbox = sandbox
        self.topic = topic
        self.channels = channels
    }

    public var isConfigured: Bool { production != nil || sandbox != nil }

    public var connectionStatistics: ConnectionPoolStatistics? {
        let clients = sandbox === production ? [production] : [production, sandbox]
        let pools = clients.compactMap { $0?.poolStatistics }
        return pools.isEmpty ? nil : pools.reduce(ConnectionPoolStatistics(), +)
    }

    public func shutdown() async {
        await production?.shutdown()
        if sandbox !== production { await sandbox?.shutdown() }
        await channels.production?.shutdown()
        if channels.sandbox !== channels.production { await channels.sandbox?.shutdown() }
    }

    public func configurationProblem(for installation: Installation) -> String? {
        if (installation.environment == .sandbox ? sandbox : production) == nil {
            return "APNs is not configured for \(installation.environment.rawValue) tokens"
        }
        if installation.bundleID == nil, topic == nil {
            return "APNs needs a topic: the installation has no bundle_id and the app no apns.topic"
        }
        return nil
    }

    /// The topic `validate` renders with when the app has no `apns.topic` (its installations bring
    /// their `bundle_id`). The topic travels in the `apns-topic` header, not in the payload whose size
    /// is checked, and the renderer refuses to render without one; any value sizes the same.
    static let sizingTopic = "com.example.sizing"

    public func validate(_ notification: PushNotification, now: Date) throws(HeraldError) {
        let badge: Int? = notification.payload.badge == nil ? nil : 999_999
        // Sandbox recipients may have overrides of their own (`apns_sandbox`): both must fit.
        let environments: [PushEnvironment] =
            notification.payload.overrides[NotificationPayload.apnsSandboxOverrides] == nil
            ? [.production] : [.production, .sandbox]
        for environment in environments {
            let rendered = try APNsRenderer(defaultTopic: topic ?? Self.sizingTopic).render(
                notification, token: String(repeating: "0", count: 64), environment: environment, bundleID: nil,
                badge: badge, soundEnabled: true, now: now)
            do {
                try rendered.validate()
            } catch {
                throw .invalidValue(
                    "payload", code: "payload_too_large",
                    "The payload rendered for APNs is \(rendered.payload.count) bytes; APNs takes at most \(rendered.pushType.maxPayloadBytes)."
                )
            }
        }
    }

    public func send(
        _ pushes: [OutgoingPush], of notification: PushNotification, now: Date
    ) async -> [TransportResult] {
        if let live = notification.liveActivity, live.channel != nil {
            var results: [TransportResult] = []
            for push in pushes { results.append(await sendBroadcast(push, live: live, of: notification)) }
            return results
        }
        var results = [TransportResult?](repeating: nil, count: pushes.count)
        let byEnvironment = Dictionary(grouping: pushes.indices, by: { pushes[$0].recipient.environment })
        await withTaskGroup(of: [(Int, TransportResult)].self) { group in
            for (environment, indices) in byEnvironment {
                group.addTask {
                    await self.send(indices.map { pushes[$0] }, environment: environment, notification, now: now)
                        .enumerated().map { (indices[$0.offset], $0.element) }
                }
            }
            for await batch in group { for (index, result) in batch { results[index] = result } }
        }
        return results.map { $0 ?? TransportResult(.retry(reason: "no answer", after: nil)) }
    }

    private func send(
        _ pushes: [OutgoingPush], environment: PushEnvironment, _ notification: PushNotification, now: Date
    ) async -> [TransportResult] {
        guard let client = environment == .production ? production : sandbox else {
            return pushes.map { _ in
                TransportResult(.configurationFailure(reason: "APNs \(environment.rawValue) is not configured"))
            }
        }
        let renderer = APNsRenderer(defaultTopic: topic)
        var results = [TransportResult?](repeating: nil, count: pushes.count)
        var rendered: [APNsNotification] = []
        var positions: [Int] = []
        // Devices that share a bundle id, badge and sound setting get the same rendering: render it
        // once and change only the token (a broadcast renders a handful of payloads, not one per device).
        struct Variant: Hashable {
            var bundleID: String?
            var badge: Int?
            var soundEnabled: Bool
        }
        var variants: [Variant: Result<APNsNotification, HeraldError>] = [:]
        for (index, push) in pushes.enumerated() {
            let token = push.recipient.token.identity
            let variant = Variant(
                bundleID: push.recipient.bundleID, badge: push.badge, soundEnabled: push.soundEnabled)
            let template =
                variants[variant]
                ?? Result { () throws(HeraldError) in
                    try renderer.render(
                        notification, token: token, environment: environment, bundleID: variant.bundleID,
                        badge: variant.badge, soundEnabled: variant.soundEnabled, now: now)
                }
            variants[variant] = template
            switch template {
            case .success(var request):
                request.deviceToken = token
                rendered.append(request)
                positions.append(index)
            case .failure(let error):
                results[index] = TransportResult(.configurationFailure(reason: error.message))
            }
        }
        let answers = await client.send(batch: rendered)
        for (position, answer) in zip(positions, answers) {
            switch answer {
            case .success(let response):
                // 503 and 500 concern APNs as a whole; 429 TooManyRequests is about one device token.
                // Status 0: no answer (no connection, or a timeout).
                results[position] = TransportResult(
                    response.outcome, providerWide: response.status == 503 || response.status == 500,
                    unreachable: response.status == 0 && response.outcome.isRetry)
            case .failure(let error):
                results[position] = TransportResult(.rejected(reason: error.message))
            }
        }
        return results.map { $0 ?? TransportResult(.retry(reason: "no answer", after: nil)) }
    }
}
