import Foundation
import HeraldCore
import HeraldHTTP2

/// Firebase Cloud Messaging HTTP v1: the unified payload rendered by ``FCMRenderer``, up to 200
/// requests in flight, FCM's answers mapped to outcomes.
public struct FCMTransport: Transport {
    public var service: PushService { .fcm }

    /// The client; nil when not configured (its deliveries fail).
    public let client: FCMClient?

    public var isConfigured: Bool { client != nil }
    /// Requests in flight at once.
    static let concurrency = 200

    /// Creates the transport; with no client it still validates payloads, and fails deliveries with
    /// a configuration failure.
    public init(client: FCMClient?) {
        self.client = client
    }

    public var connectionStatistics: ConnectionPoolStatistics? { client?.poolStatistics }

    public func shutdown() async {
        await client?.shutdown()
    }

    public func configurationProblem(for installation: Installation) -> String? {
        client == nil ? "FCM is not configured" : nil
    }

    public func validate(_ notification: PushNotification, now: Date) throws(HeraldError) {
        let badge: Int? = notification.payload.badge == nil ? nil : 999_999
        let rendered = try FCMRenderer().render(
            notification, token: String(repeating: "x", count: 163), badge: badge, soundEnabled: true, now: now)
        let size = rendered.json.serialized().count
        if size > FCMMessage.maxBytes {
            throw .invalidValue(
                "payload", code: "payload_too_large",
                "The message rendered for FCM is \(size) bytes; FCM takes at most \(FCMMessage.maxBytes).")
        }
    }

    public func send(
        _ pushes: [OutgoingPush], of notification: PushNotification, now: Date
    ) async -> [TransportResult] {
        guard let client else {
            return pushes.map { _ in TransportResult(.configurationFailure(reason: "FCM is not configured")) }
        }
        let renderer = FCMRenderer()
        var results = [TransportResult?](repeating: nil, count: pushes.count)
        await withTaskGroup(of: (Int, TransportResult).self) { group in
            var next = 0
            func add() {
                let index = next
                next += 1
                let push = pushes[index]
                group.addTask {
                    let message: FCMMessage
                    do throws(HeraldError) {
                        message = try renderer.render(
                            notification, token: push.recipient.token.identity, badge: push.badge,
                            soundEnabled: push.soundEnabled, now: now)
                    } catch {
                        return (index, TransportResult(.configurationFailure(reason: error.message)))
                    }
                    do throws(FCMError) {
                        let response = try await client.send(message)
                        // QUOTA_EXCEEDED and UNAVAILABLE are project-wide: the whole provider slows down.
                        // Status 0: no answer (no connection, or a timeout).
                        return (
                            index,
                            TransportResult(
                                response.outcome, providerWide: response.status == 429 || response.status == 503,
                                unreachable: response.status == 0 && response.outcome.isRetry)
                        )
                    } catch {
                        return (index, TransportResult(.rejected(reason: error.message)))
                    }
                }
            }
            while next < min(Self.concurrency, pushes.count) { add() }
            for await (index, result) in group {
                results[index] = result
                if next < pushes.count { add() }
            }
        }
        return results.map { $0 ?? TransportResult(.retry(reason: "no answer", after: nil)) }
    }
}
