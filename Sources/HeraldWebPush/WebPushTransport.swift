import Foundation
import HeraldCore
import HeraldHTTP2

/// Web Push (RFC 8030, 8291, 8292): the unified payload rendered by ``WebPushRenderer`` as the JSON a
/// service worker shows, encrypted for each subscription and sent, VAPID-signed, to its push
/// service; the services' answers mapped to outcomes.
public struct WebPushTransport: Transport {
    public var service: PushService { .webpush }

    /// The client; nil when the app has no VAPID key (its deliveries fail).
    public let client: WebPushClient?

    public var isConfigured: Bool { client != nil }

    /// Creates the transport; with no client it still validates payloads, and fails deliveries with
    /// a configuration failure.
    public init(client: WebPushClient?) {
        self.client = client
    }

    public var connectionStatistics: ConnectionPoolStatistics? { client?.poolStatistics }

    public func shutdown() async {
        await client?.shutdown()
    }

    public func validate(_ notification: PushNotification, now: Date) throws(HeraldError) {
        let badge: Int? = notification.payload.badge == nil ? nil : 999_999
        let size = WebPushRenderer().render(notification, badge: badge, soundEnabled: true, now: now).body.count
        // RFC 8291 §4: one 4096-byte record carries at most 3993 bytes of plaintext.
        if size > WebPushEncryptor.maxPlaintextBytes {
            throw .invalidValue(
                "payload", code: "payload_too_large",
                "The message rendered for Web Push is \(size) bytes; an encrypted push carries at most "
                    + "\(WebPushEncryptor.maxPlaintextBytes).")
        }
    }

    public func send(
        _ pushes: [OutgoingPush], of notification: PushNotification, now: Date
    ) async -> [TransportResult] {
        guard let client else {
            return pushes.map { _ in TransportResult(.configurationFailure(reason: "Web Push is not configured")) }
        }
        let renderer = WebPushRenderer()
        var results = [TransportResult?](repeating: nil, count: pushes.count)
        var outgoing: [WebPushNotification] = []
        var positions: [Int] = []
        for (index, push) in pushes.enumerated() {
            guard case .webPush(let subscription) = push.recipient.token else {
                results[index] = TransportResult(.invalidToken(reason: "not a Web Push subscription", since: nil))
                continue
            }
            let rendered = renderer.render(notification, badge: push.badge, soundEnabled: push.soundEnabled, now: now)
            outgoing.append(
                WebPushNotification(
                    subscription: subscription, payload: rendered.body, ttl: rendered.ttl,
                    urgency: WebPushUrgency(rawValue: rendered.urgency) ?? .normal,
                    topic: rendered.topic.map(WebPushTopic.derive(fromCollapseID:))))
            positions.append(index)
        }
        for (position, result) in zip(positions, await client.send(batch: outgoing)) {
            switch result {
            case .success(let response):
                results[position] = TransportResult(
                    response.outcome, unreachable: response.status == 0 && response.outcome.isRetry)
            case .failure(let error):
                // What the client refuses before sending: the subscription's keys or the size.
                let outcome: DeliveryOutcome =
                    switch error.code {
                    case .invalidEndpoint, .invalidP256DH, .invalidAuthSecret:
                        .invalidToken(reason: error.message, since: nil)
                    case .invalidVAPIDKey, .invalidSubject: .configurationFailure(reason: error.message)
                    default: .rejected(reason: error.message)
                    }
                results[position] = TransportResult(outcome)
            }
        }
        return results.map { $0 ?? TransportResult(.retry(reason: "no answer", after: nil)) }
    }
}
