import Foundation

/// How the direct channels of several nodes sharing one store reach each other: which node holds
/// each installation's open channel (a lease the node renews while it lives), and messages between
/// nodes (a notification for a device connected elsewhere, and its outcome). PostgreSQL implements
/// it with a table and `LISTEN/NOTIFY`; a single-node store has no other node to reach.
public protocol ChannelRelay: Sendable {
    /// Records that `node` holds the installation's channel until `until` (replacing another holder).
    func attachChannel(installationID: String, node: String, until: Date) async throws

    /// Forgets `node`'s hold of the installation's channel (another node's newer hold stays).
    func detachChannel(installationID: String, node: String) async throws

    /// Extends every hold of `node` to `until`.
    func renewChannels(node: String, until: Date) async throws

    /// The nodes holding these installations' channels at `now` (installations without a live hold are left out).
    func channelHolders(of installationIDs: [String], now: Date) async throws -> [String: String]

    /// Whether any node holds any channel at `now`.
    func anyChannelHeld(now: Date) async throws -> Bool

    /// Sends a message (at most ``maxMessageBytes`` of UTF-8) to `node`; lost when the node is not listening.
    func post(_ message: String, to node: String) async throws

    /// Receives the messages posted to `node` into `messages` until the calling task is cancelled
    /// (reconnecting after a failure: messages posted meanwhile are lost, as ``post(_:to:)`` allows).
    /// The caller runs it as a child task beside the one that consumes the stream.
    func listen(for node: String, into messages: AsyncStream<String>.Continuation) async
}

extension ChannelRelay {
    /// The largest message a relay carries (PostgreSQL's `NOTIFY` payload limit, less headroom).
    public static var maxMessageBytes: Int { 7_900 }
}
