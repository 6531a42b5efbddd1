import Foundation
import HeraldCore

// iOS 18 broadcast channels (docs/live-activities.md): their management through APNs' channel
// management service, and a broadcast push, sent as the engine's broadcast recipient of a channel.
extension APNsTransport: LiveActivityChannels {
    public func createChannel(
        storagePolicy: LiveActivityChannel.StoragePolicy, environment: PushEnvironment
    ) async throws(HeraldError) -> String {
        let (client, bundle) = try channelClient(environment)
        do {
            return try await client.createChannel(
                bundleID: bundle, storagePolicy: storagePolicy == .none ? .noMessageStored : .mostRecentMessageStored
            ).id
        } catch {
            throw Self.unavailable(error)
        }
    }

    public func deleteChannel(_ id: String, environment: PushEnvironment) async throws(HeraldError) {
        let (client, bundle) = try channelClient(environment)
        do {
            try await client.deleteChannel(id, bundleID: bundle)
        } catch  where error.reason == .channelNotRegistered {
            // Gone at APNs already: deleted is what was asked.
        } catch {
            throw Self.unavailable(error)
        }
    }

    private func channelClient(_ environment: PushEnvironment) throws(HeraldError) -> (APNsChannelClient, String) {
        guard let client = environment == .production ? channels.production : channels.sandbox else {
            throw HeraldError(
                kind: .conflict, code: "channels_not_enabled",
                message:
                    "Broadcast channels are not enabled for APNs \(environment.rawValue) (apns.broadcast_channels).")
        }
        guard let topic else {
            throw HeraldError(
                kind: .conflict, code: "missing_topic",
                message: "Broadcast channels belong to the app's bundle id: configure apns.topic.")
        }
        return (client, topic)
    }

    private static func unavailable(_ error: APNsChannelError) -> HeraldError {
        HeraldError(kind: .unavailable, code: "provider_refused", message: "APNs channel management: \(error.message)")
    }

    /// Sends one broadcast push to the channel the recipient stands for.
    func sendBroadcast(
        _ push: OutgoingPush, live: LiveActivityPush, of notification: PushNotification
    ) async
        -> TransportResult
    {
        let environment = push.recipient.environment
        guard let client = environment == .production ? production : sandbox, let topic else {
            return TransportResult(
                .configurationFailure(reason: "APNs \(environment.rawValue) or apns.topic is not configured"))
        }
        let aps = APNsRenderer.liveActivityAPS(live, notification)
        let broadcast = APNsChannelBroadcast(
            bundleID: topic, channelID: push.recipient.token.identity,
            priority: live.highPriority ? .immediate : .considerate, expiration: notification.expiresAt,
            payload: JSONValue.object(["aps": .object(aps)]).serialized())
        do {
            let receipt = try await client.send(broadcast: broadcast)
            return TransportResult(.delivered(providerID: receipt.uniqueID ?? receipt.requestID))
        } catch {
            let reason = error.reason?.wire ?? error.message
            switch error.status {
            case 0: return TransportResult(.retry(reason: reason, after: nil), unreachable: true)
            case 429, 500, 503:
                return TransportResult(.retry(reason: reason, after: nil), providerWide: error.status != 429)
            default: return TransportResult(.rejected(reason: reason))
            }
        }
    }
}
