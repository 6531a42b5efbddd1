/// A transport that manages iOS 18 broadcast channels at its provider (APNs' channel management
/// service) and sends one push to a channel's every subscriber (docs/live-activities.md). The
/// channel routes find it among the app's transports; the engine sends a broadcast through it as the
/// recipient ``Recipient/init(broadcastTo:service:)`` of the channel.
public protocol LiveActivityChannels: Transport {
    /// Creates a channel in `environment`. - Returns: the provider's id of the channel.
    /// - Throws: `HeraldError`: `unavailable` when the provider did not answer or refused it.
    func createChannel(
        storagePolicy: LiveActivityChannel.StoragePolicy, environment: PushEnvironment
    ) async throws(HeraldError) -> String

    /// Deletes a channel (one the provider no longer knows counts as deleted).
    func deleteChannel(_ id: String, environment: PushEnvironment) async throws(HeraldError)
}
