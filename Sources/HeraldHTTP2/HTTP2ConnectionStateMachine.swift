import DequeModule

/// The stream bookkeeping of one HTTP/2 client connection, with no I/O: it decides which request
/// goes out on which stream, which wait, and what happens to each on SETTINGS, GOAWAY, resets and
/// connection loss. The channel handler feeds events in and performs the actions that come out.
///
/// `Request` is whatever the caller uses to identify a request; the machine never looks inside it.
struct HTTP2ConnectionStateMachine<Request> {
    /// What the handler must do after an event.
    enum Action {
        /// Write the request's frames on a new stream with this id.
        case send(HTTP2StreamIDValue, Request)
        /// The request's stream has finished: hand the response over.
        case complete(Request)
        /// The request was never processed by the peer: try it on another connection.
        case retry(Request)
        /// The request failed on this connection and must not be retried blindly.
        case fail(Request, HTTP2ClientError)
        /// Close the connection: nothing is in flight and no new streams may start.
        case close
    }

    enum State: Equatable {
        /// The connection is up and takes new streams.
        case active
        /// The peer sent GOAWAY: streams up to `lastStreamID` finish, nothing new starts.
        case draining(lastStreamID: HTTP2StreamIDValue)
        /// The connection is gone.
        case closed
    }

    private(set) var state: State = .active
    /// Streams allowed at once: the peer's SETTINGS_MAX_CONCURRENT_STREAMS, capped by ours.
    private(set) var maxConcurrentStreams: Int
    /// Herald's own cap: NIOHTTP2's per-stream bookkeeping grows with open streams, so more
    /// connections beat deeper ones.
    let streamCap: Int
    /// Requests on open streams, by stream id.
    private(set) var open: [HTTP2StreamIDValue: Request] = [:]
    /// Requests waiting for a free stream slot.
    private(set) var pending: Deque<Request> = []
    /// Bound on `pending`.
    let maxPending: Int
    private var nextStreamID: HTTP2StreamIDValue = 1

    /// Creates the machine for a new connection.
    /// - Parameters:
    ///   - initialMaxConcurrentStreams: the limit assumed before the peer's SETTINGS arrive.
    ///   - maxPending: how many requests may wait for a stream on this connection.
    init(initialMaxConcurrentStreams: Int = 100, streamCap: Int = .max, maxPending: Int) {
        self.maxConcurrentStreams = min(initialMaxConcurrentStreams, streamCap)
        self.streamCap = streamCap
        self.maxPending = maxPending
    }

    /// Streams open now.
    var openCount: Int { open.count }

    /// Requests on this connection, sent or waiting.
    var load: Int { open.count + pending.count }

    /// Whether the connection takes new requests.
    var isAcceptingRequests: Bool { state == .active }

    /// A new request for this connection.
    mutating func enqueue(_ request: Request) -> [Action] {
        switch state {
        case .active:
            if open.count < maxConcurrentStreams, pending.isEmpty {
                return [startStream(request)]
            }
            guard pending.count < maxPending else { return [.retry(request)] }
            pending.append(request)
            return []
        case .draining, .closed:
            return [.retry(request)]
        }
    }

    /// The peer's SETTINGS changed the stream limit (APNs may lower it to 1 and raise it again).
    mutating func settingsReceived(maxConcurrentStreams limit: Int?) -> [Action] {
        guard let limit else { return [] }
        maxConcurrentStreams = min(max(0, limit), streamCap)
        return drainPending()
    }

    /// A stream ended with a complete response.
    mutating func streamCompleted(_ id: HTTP2StreamIDValue) -> [Action] {
        guard let request = open.removeValue(forKey: id) else { return [] }
        return [.complete(request)] + drainPending() + closeIfDrained()
    }

    /// The peer reset a stream. REFUSED_STREAM means it did no work (RFC 9113 §8.7): safe to retry.
    mutating func streamReset(_ id: HTTP2StreamIDValue, refused: Bool, errorCode: UInt32) -> [Action] {
        guard let request = open.removeValue(forKey: id) else { return [] }
        let outcome: Action = refused ? .retry(request) : .fail(request, .streamReset(code: errorCode))
        return [outcome] + drainPending() + closeIfDrained()
    }

    /// A stream ended without a usable response (its deadline passed, or the answer was malformed).
    mutating func streamFailed(_ id: HTTP2StreamIDValue, error: HTTP2ClientError) -> [Action] {
        guard let request = open.removeValue(forKey: id) else { return [] }
        return [.fail(request, error)] + drainPending() + closeIfDrained()
    }

    /// The peer sent GOAWAY: streams above `lastStreamID` were not processed and go elsewhere,
    /// as do waiting requests (RFC 9113 §6.8).
    mutating func goAwayReceived(lastStreamID: HTTP2StreamIDValue) -> [Action] {
        guard state != .closed else { return [] }
        state = .draining(lastStreamID: lastStreamID)
        var actions: [Action] = []
        for id in open.keys.sorted() where id > lastStreamID {
            if let request = open.removeValue(forKey: id) { actions.append(.retry(request)) }
        }
        while let request = pending.popFirst() { actions.append(.retry(request)) }
        return actions + closeIfDrained()
    }

    /// The connection is gone. Waiting requests never left and go elsewhere; requests in flight may
    /// have reached the peer, so they fail with the error rather than risk a duplicate.
    mutating func connectionClosed() -> [Action] {
        guard state != .closed else { return [] }
        state = .closed
        var actions: [Action] = []
        for id in open.keys.sorted() {
            if let request = open.removeValue(forKey: id) { actions.append(.fail(request, .connectionClosed)) }
        }
        while let request = pending.popFirst() { actions.append(.retry(request)) }
        return actions
    }

    /// Stream ids are odd and at most 2^31 - 1 for a client (RFC 9113 §5.1.1); when they run out
    /// the connection drains and a new one takes over.
    private mutating func startStream(_ request: Request) -> Action {
        let id = nextStreamID
        nextStreamID += 2
        open[id] = request
        if nextStreamID > HTTP2StreamIDValue(Int32.max) { state = .draining(lastStreamID: id) }
        return .send(id, request)
    }

    private mutating func drainPending() -> [Action] {
        var actions: [Action] = []
        while state == .active, open.count < maxConcurrentStreams, let request = pending.popFirst() {
            actions.append(startStream(request))
        }
        return actions
    }

    private mutating func closeIfDrained() -> [Action] {
        if case .draining = state, open.isEmpty {
            state = .closed
            return [.close]
        }
        return []
    }
}

/// A stream id as the state machine counts it (the channel handler converts to `HTTP2StreamID`).
typealias HTTP2StreamIDValue = Int
