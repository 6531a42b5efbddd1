import Foundation
import HeraldAPNs
import HeraldCore
import HeraldFCM
import Synchronization

/// AWS SNS mobile push: the payload rendered for APNs (``APNsRenderer``) or FCM (``FCMRenderer``),
/// published with `MessageStructure=json` to the installation's platform endpoint, under the key of
/// its platform and environment (`APNS`, `APNS_SANDBOX`, `GCM`), the value always a JSON string.
///
/// The endpoint is created (or, when SNS already has one for the token, adopted) in the app's
/// platform application for that key, with the installation id as `CustomUserData`, and remembered
/// for the token; SNS makes `CreatePlatformEndpoint` idempotent for the same token and attributes.
///
/// With a broadcast topic, every endpoint is subscribed to it, and a notification to everyone that
/// asks for no per-device rule (`respect_preferences: false`, no badge increment, no device-local
/// push time) is published once to the topic, its message carrying every platform's key, each
/// rendered for its own platform and environment (`APNS_SANDBOX` from the `apns_sandbox` overrides
/// when given), as SNS hands each subscriber the key of its own.
public struct SNSTransport: Transport {
    /// The app's platform application ARNs by SNS platform key (`APNS`, `APNS_SANDBOX`, `GCM`).
    public struct Applications: Sendable, Equatable {
        public var apns: String?
        public var apnsSandbox: String?
        public var gcm: String?

        /// Creates the ARNs.
        public init(apns: String? = nil, apnsSandbox: String? = nil, gcm: String? = nil) {
            self.apns = apns
            self.apnsSandbox = apnsSandbox
            self.gcm = gcm
        }

        /// The application for an SNS platform.
        func arn(for platform: SNSPlatform) -> String? {
            switch platform {
            case .apns(.production): apns
            case .apns(.sandbox): apnsSandbox
            case .gcm: gcm
            }
        }
    }

    public var service: PushService { .sns }

    /// The client; nil when the app does not configure SNS (its deliveries fail).
    public let client: SNSClient?

    public var isConfigured: Bool { client != nil }
    public let applications: Applications
    /// The APNs topic of installations without a bundle id (SNS takes it from the application).
    public let topic: String?
    /// The topic every endpoint is subscribed to, for broadcasts; nil sends each endpoint its own.
    public let broadcastTopic: String?
    private let endpoints = EndpointCache()

    /// Creates the transport; with no client it still validates payloads, and fails deliveries with
    /// a configuration failure.
    public init(
        client: SNSClient?, applications: Applications = .init(), topic: String? = nil, broadcastTopic: String? = nil
    ) {
        self.client = client
        self.applications = applications
        self.topic = topic
        self.broadcastTopic = broadcastTopic
    }

    public func shutdown() async {}

    public func validate(_ notification: PushNotification, now: Date) throws(HeraldError) {
        // The providers behind SNS keep their own limits.
        try APNsTransport(production: nil, sandbox: nil, topic: topic).validate(notification, now: now)
        try FCMTransport(client: nil).validate(notification, now: now)
    }

    /// The SNS platform of a recipient: Apple platforms through APNs in their environment, the rest GCM.
    static func platform(of recipient: Recipient) -> SNSPlatform {
        recipient.platform.isApple ? .apns(recipient.environment) : .gcm
    }

    /// The message for one push; for the broadcast recipient, one carrying every platform's key.
    func message(_ push: OutgoingPush, of notification: PushNotification, now: Date) throws(HeraldError) -> SNSMessage {
        let text = notification.payload.body ?? notification.payload.title ?? ""
        guard push.recipient.isBroadcast else {
            return try message(push, platform: Self.platform(of: push.recipient), of: notification, now: now)
        }
        var messages: [SNSMessage] = []
        for platform: SNSPlatform in [.apns(.production), .apns(.sandbox), .gcm]
        where applications.arn(for: platform) != nil {
            messages.append(try message(push, platform: platform, of: notification, now: now))
        }
        return .combining(messages, default: text)
    }

    /// The message for one push to an endpoint of `platform`.
    private func message(
        _ push: OutgoingPush, platform: SNSPlatform, of notification: PushNotification, now: Date
    ) throws(HeraldError) -> SNSMessage {
        let recipient = push.recipient
        let text = notification.payload.body ?? notification.payload.title ?? ""
        switch platform {
        case .apns(let environment):
            // Each environment's own overrides: a topic's `APNS` and `APNS_SANDBOX` may differ.
            let rendered = try APNsRenderer(defaultTopic: topic ?? "com.example.sns").render(
                notification, token: recipient.token.identity, environment: environment, bundleID: recipient.bundleID,
                badge: push.badge, soundEnabled: push.soundEnabled, now: now)
            guard case .object(let payload) = try JSONValue.parse(rendered.payload) else {
                throw .internal("The APNs payload is not an object.")
            }
            return .apns(payload, environment: environment, default: text)
        case .gcm:
            let rendered = try FCMRenderer().render(
                notification, token: recipient.token.identity, badge: push.badge, soundEnabled: push.soundEnabled,
                now: now)
            // A GCM endpoint is never an Apple device: FCM's apns block has no reader there (the
            // AOVIS guide's §6 message is notification and data alone).
            var message = rendered.json.objectValue ?? [:]
            message["apns"] = nil
            return .gcm(fcmV1Message: message, default: text)
        }
    }

    public func send(
        _ pushes: [OutgoingPush], of notification: PushNotification, now: Date
    ) async -> [TransportResult] {
        guard let client else {
            return pushes.map { _ in TransportResult(.configurationFailure(reason: "SNS is not configured")) }
        }
        return await withTaskGroup(of: (Int, TransportResult).self) { group in
            for (index, push) in pushes.enumerated() {
                group.addTask { (index, await self.send(push, of: notification, client: client, now: now)) }
            }
            var results = [TransportResult](
                repeating: TransportResult(.retry(reason: "no answer", after: nil)), count: pushes.count)
            for await (index, result) in group { results[index] = result }
            return results
        }
    }

    private func send(
        _ push: OutgoingPush, of notification: PushNotification, client: SNSClient, now: Date
    ) async -> TransportResult {
        if push.recipient.isBroadcast { return await broadcast(push, of: notification, client: client, now: now) }
        let platform = Self.platform(of: push.recipient)
        guard let application = applications.arn(for: platform) else {
            return TransportResult(
                .configurationFailure(reason: "No SNS platform application for \(platform.key) is configured"))
        }
        let message: SNSMessage
        do throws(HeraldError) {
            message = try self.message(push, of: notification, now: now)
        } catch {
            return TransportResult(.rejected(reason: error.message))
        }
        let token = push.recipient.token.identity
        do throws(SNSError) {
            let endpoint: String
            if let known = endpoints.arn(application: application, token: token) {
                endpoint = known
            } else {
                endpoint = try await client.createOrAdoptPlatformEndpoint(
                    platformApplicationARN: application, token: token, customUserData: push.recipient.installationID
                ).endpointARN
                endpoints.remember(endpoint, application: application, token: token)
                await subscribe(endpoint, client: client)
            }
            let id = try await client.publish(message, to: .endpoint(arn: endpoint))
            return TransportResult(.delivered(providerID: id))
        } catch {
            let outcome = SNSResponseClassifier.outcome(for: error)
            if case .invalidToken = outcome { endpoints.forget(application: application, token: token) }
            return TransportResult(
                outcome, providerWide: error.awsCode == "Throttling", unreachable: error.code == .unreachable)
        }
    }
}

extension SNSTransport: BroadcastRoute {
    /// The broadcast topic, for a notification that asks for no per-device rule: preferences,
    /// quiet hours, badge increments and device-local push times need each device, which a topic
    /// does not see.
    public func broadcastAddress(for notification: PushNotification) -> String? {
        guard let broadcastTopic, client != nil, !notification.respectPreferences,
            notification.target.platforms == nil
        else { return nil }
        if case .increment? = notification.payload.badge { return nil }
        if let text = notification.pushTime, case .local? = try? PushTime(parsing: text, field: "push_time") {
            return nil
        }
        return broadcastTopic
    }

    /// Publishes a broadcast to the topic, once.
    func broadcast(
        _ push: OutgoingPush, of notification: PushNotification, client: SNSClient, now: Date
    ) async -> TransportResult {
        do throws(SNSError) {
            let message: SNSMessage
            do throws(HeraldError) {
                message = try self.message(push, of: notification, now: now)
            } catch {
                return TransportResult(.rejected(reason: error.message))
            }
            let id = try await client.publish(message, to: .topic(arn: push.recipient.token.identity))
            return TransportResult(.delivered(providerID: id))
        } catch {
            return TransportResult(
                SNSResponseClassifier.outcome(for: error), providerWide: error.awsCode == "Throttling",
                unreachable: error.code == .unreachable)
        }
    }

    /// Subscribes an endpoint to the broadcast topic (SNS keeps one subscription per endpoint); a
    /// failure is logged by the client and tried again when the endpoint is next created or changed.
    func subscribe(_ endpoint: String, client: SNSClient) async {
        guard let broadcastTopic else { return }
        _ = try? await client.subscribe(topicARN: broadcastTopic, endpointARN: endpoint)
    }
}

/// Endpoint ARNs by platform application and token, learned from SNS.
final class EndpointCache: Sendable {
    private let arns = Mutex<[String: String]>([:])
    /// At most this many are kept; past it the cache starts over (SNS answers again).
    static let limit = 100_000

    func arn(application: String, token: String) -> String? {
        arns.withLock { $0[application + "\n" + token] }
    }

    func remember(_ arn: String, application: String, token: String) {
        arns.withLock { arns in
            if arns.count >= Self.limit { arns.removeAll() }
            arns[application + "\n" + token] = arn
        }
    }

    func forget(application: String, token: String) {
        _ = arns.withLock { $0.removeValue(forKey: application + "\n" + token) }
    }
}

extension SNSTransport: InstallationLifecycle {
    /// Creates (or adopts) the installation's platform endpoint with its id as `CustomUserData`; a
    /// stored endpoint whose token changed is updated in place (`SetEndpointAttributes` with the new
    /// token and `Enabled=true`).
    public func registered(_ installation: Installation, previous: Installation?) async -> String? {
        guard let client else { return nil }
        let recipientPlatform: SNSPlatform =
            installation.platform.isApple ? .apns(installation.environment) : .gcm
        guard let application = applications.arn(for: recipientPlatform) else { return nil }
        let token = installation.token.identity
        do throws(SNSError) {
            if let arn = installation.snsEndpointARN ?? previous?.snsEndpointARN {
                guard previous?.token != installation.token || previous?.valid == false else { return arn }
                try await client.setEndpointAttributes(
                    endpointARN: arn,
                    SNSEndpointAttributes(token: token, enabled: true, customUserData: installation.id))
                if let old = previous?.token.identity { endpoints.forget(application: application, token: old) }
                endpoints.remember(arn, application: application, token: token)
                await subscribe(arn, client: client)
                return arn
            }
            let arn = try await client.createOrAdoptPlatformEndpoint(
                platformApplicationARN: application, token: token, customUserData: installation.id
            ).endpointARN
            endpoints.remember(arn, application: application, token: token)
            await subscribe(arn, client: client)
            return arn
        } catch {
            // Not fatal: the next send creates or adopts the endpoint.
            return nil
        }
    }

    public func removed(_ installation: Installation) async {
        guard let client, let arn = installation.snsEndpointARN else { return }
        for application in [applications.apns, applications.apnsSandbox, applications.gcm].compactMap({ $0 }) {
            endpoints.forget(application: application, token: installation.token.identity)
        }
        // SNS keeps a deleted endpoint's subscriptions: Subscribe answers the existing one's ARN.
        if let broadcastTopic,
            let subscription = try? await client.subscribe(topicARN: broadcastTopic, endpointARN: arn)
        {
            try? await client.unsubscribe(subscriptionARN: subscription)
        }
        try? await client.deleteEndpoint(endpointARN: arn)
    }
}
