import Synchronization

/// Which node holds the open direct channel of each installation. One node answers from its
/// memory; several nodes share it through their database (the PostgreSQL deployment), so a
/// notification can be routed to the node holding the socket. The engine only asks and tells
/// through this interface.
public protocol ChannelPresence: Sendable {
    /// A node opened the installation's channel.
    func attached(installationID: String, node: String) async
    /// A node's channel of the installation closed.
    func detached(installationID: String, node: String) async
    /// The node holding the installation's channel, if any.
    func holder(of installationID: String) async -> String?
}

/// The presence of one node: its own channels, in memory.
public final class LocalChannelPresence: ChannelPresence {
    private let holders = Mutex<[String: String]>([:])

    /// Creates an empty presence.
    public init() {}

    public func attached(installationID: String, node: String) async {
        holders.withLock { $0[installationID] = node }
    }

    public func detached(installationID: String, node: String) async {
        holders.withLock { holders in
            if holders[installationID] == node { holders.removeValue(forKey: installationID) }
        }
    }

    public func holder(of installationID: String) async -> String? {
        holders.withLock { $0[installationID] }
    }
}
