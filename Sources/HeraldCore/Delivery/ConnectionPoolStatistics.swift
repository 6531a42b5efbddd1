/// A snapshot of a pool's use, read for metrics and the console: cheap (one lock, no I/O).
public struct ConnectionPoolStatistics: Sendable, Equatable {
    /// Connections open now.
    public var connections: Int
    /// Connections being opened (TCP, TLS, SETTINGS).
    public var connecting: Int
    /// Requests on a connection, open as streams or queued behind the peer's stream limit.
    public var streamsInUse: Int
    /// Requests waiting for a connection to open.
    public var waiting: Int

    /// A snapshot.
    public init(connections: Int = 0, connecting: Int = 0, streamsInUse: Int = 0, waiting: Int = 0) {
        self.connections = connections
        self.connecting = connecting
        self.streamsInUse = streamsInUse
        self.waiting = waiting
    }

    /// Two pools' use together.
    public static func + (lhs: Self, rhs: Self) -> Self {
        Self(
            connections: lhs.connections + rhs.connections, connecting: lhs.connecting + rhs.connecting,
            streamsInUse: lhs.streamsInUse + rhs.streamsInUse, waiting: lhs.waiting + rhs.waiting)
    }
}
