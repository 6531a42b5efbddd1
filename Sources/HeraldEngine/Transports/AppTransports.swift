import Foundation
import HeraldAPNs
import HeraldCore
import HeraldFCM

/// The provider clients of one app, and how the unified payload is rendered for each.
public final class AppTransports: Sendable {
    /// APNs: one client per environment (hosts differ), and the topic for installations without a bundle id.
    public struct APNs: Sendable {
        public var production: APNsClient?
        public var sandbox: APNsClient?
        public var topic: String?

        /// Creates the APNs side.
        public init(production: APNsClient?, sandbox: APNsClient?, topic: String?) {
            self.production = production
            self.sandbox = sandbox
            self.topic = topic
        }
    }

    public let apns: APNs?
    public let fcm: FCMClient?

    /// Creates an app's transports; a provider left nil fails its deliveries with a configuration failure.
    public init(apns: APNs?, fcm: FCMClient?) {
        self.apns = apns
        self.fcm = fcm
    }

    /// The services this app can deliver through.
    public var services: Set<PushService> {
        var services: Set<PushService> = []
        if apns != nil { services.insert(.apns) }
        if fcm != nil { services.insert(.fcm) }
        return services
    }

    /// Closes every connection.
    public func shutdown() async {
        await apns?.production?.shutdown()
        await apns?.sandbox?.shutdown()
        await fcm?.shutdown()
    }

    /// Checks that the notification renders within every targeted provider's limit, with the
    /// largest badge and the longest values it could carry.
    /// - Throws: `HeraldError` `payload_too_large` naming the provider and the size.
    func validate(_ notification: PushNotification, services: Set<PushService>, now: Date) throws(HeraldError) {
        let badge: Int? = notification.payload.badge == nil ? nil : 999_999
        if services.contains(.apns) {
            let rendered = try APNsRenderer(defaultTopic: apns?.topic ?? "com.example.placeholder").render(
                notification, token: String(repeating: "0", count: 64), bundleID: nil, badge: badge,
                soundEnabled: true, now: now)
            do {
                try rendered.validate()
            } catch {
                throw .invalidValue(
                    "payload", code: "payload_too_large",
                    "The payload rendered for APNs is \(rendered.payload.count) bytes; APNs takes at most \(rendered.pushType.maxPayloadBytes)."
                )
            }
        }
        if services.contains(.fcm) {
            let rendered = try FCMRenderer().render(
                notification, token: String(repeating: "x", count: 163), badge: badge, soundEnabled: true, now: now)
            let size = rendered.json.serialized().count
            if size > FCMMessage.maxBytes {
                throw .invalidValue(
                    "payload", code: "payload_too_large",
                    "The message rendered for FCM is \(size) bytes; FCM takes at most \(FCMMessage.maxBytes).")
            }
        }
    }

    /// Sends pushes through their providers, concurrently, and returns each one's result in order.
    func send(_ pushes: [OutgoingPush], of notification: PushNotification, now: Date) async -> [TransportResult] {
        var results = [TransportResult?](repeating: nil, count: pushes.count)
        var apnsIndices: [PushEnvironment: [Int]] = [:]
        var fcmIndices: [Int] = []
        for (index, push) in pushes.enumerated() {
            switch push.recipient.service {
            case .apns: apnsIndices[push.recipient.environment, default: []].append(index)
            case .fcm: fcmIndices.append(index)
            case .webpush, .sns:
                results[index] = TransportResult(
                    .configurationFailure(reason: "Herald has no \(push.recipient.service.rawValue) transport yet"))
            }
        }
        await withTaskGroup(of: [(Int, TransportResult)].self) { group in
            for (environment, indices) in apnsIndices {
                group.addTask {
                    await self.sendAPNs(indices.map { pushes[$0] }, environment: environment, notification, now: now)
                        .enumerated().map { (indices[$0.offset], $0.element) }
                }
            }
            if !fcmIndices.isEmpty {
                let fcmIndices = fcmIndices
                group.addTask {
                    await self.sendFCM(fcmIndices.map { pushes[$0] }, notification, now: now)
                        .enumerated().map { (fcmIndices[$0.offset], $0.element) }
                }
            }
            for await batch in group { for (index, result) in batch { results[index] = result } }
        }
        return results.map { $0 ?? TransportResult(.retry(reason: "no result", after: nil)) }
    }

    private func sendAPNs(
        _ pushes: [OutgoingPush], environment: PushEnvironment, _ notification: PushNotification, now: Date
    ) async -> [TransportResult] {
        let client = environment == .production ? apns?.production : apns?.sandbox
        guard let client else {
            return pushes.map { _ in
                TransportResult(.configurationFailure(reason: "APNs \(environment.rawValue) is not configured"))
            }
        }
        let renderer = APNsRenderer(defaultTopic: apns?.topic)
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
            let variant = Variant(
                bundleID: push.recipient.bundleID, badge: push.badge, soundEnabled: push.soundEnabled)
            let template =
                variants[variant]
                ?? Result { () throws(HeraldError) in
                    try renderer.render(
                        notification, token: push.recipient.token, bundleID: variant.bundleID, badge: variant.badge,
                        soundEnabled: variant.soundEnabled, now: now)
                }
            variants[variant] = template
            switch template {
            case .success(var request):
                request.deviceToken = push.recipient.token
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
                results[position] = TransportResult(
                    response.outcome, providerWide: response.status == 503 || response.status == 500)
            case .failure(let error):
                results[position] = TransportResult(.rejected(reason: error.message))
            }
        }
        return results.map { $0 ?? TransportResult(.retry(reason: "no answer", after: nil)) }
    }

    private func sendFCM(
        _ pushes: [OutgoingPush], _ notification: PushNotification, now: Date
    ) async -> [TransportResult] {
        guard let fcm else {
            return pushes.map { _ in TransportResult(.configurationFailure(reason: "FCM is not configured")) }
        }
        let renderer = FCMRenderer()
        var results = [TransportResult?](repeating: nil, count: pushes.count)
        let concurrency = 200
        await withTaskGroup(of: (Int, TransportResult).self) { group in
            var next = 0
            func add() {
                let index = next
                next += 1
                let push = pushes[index]
                group.addTask {
                    do {
                        let message = try renderer.render(
                            notification, token: push.recipient.token, badge: push.badge,
                            soundEnabled: push.soundEnabled, now: now)
                        let response = try await fcm.send(message)
                        // QUOTA_EXCEEDED and UNAVAILABLE are project-wide: the whole provider slows down.
                        return (
                            index,
                            TransportResult(
                                response.outcome, providerWide: response.status == 429 || response.status == 503)
                        )
                    } catch {
                        return (
                            index, TransportResult(.rejected(reason: (error as? HeraldError)?.message ?? "\(error)"))
                        )
                    }
                }
            }
            while next < min(concurrency, pushes.count) { add() }
            for await (index, result) in group {
                results[index] = result
                if next < pushes.count { add() }
            }
        }
        return results.map { $0 ?? TransportResult(.retry(reason: "no answer", after: nil)) }
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
