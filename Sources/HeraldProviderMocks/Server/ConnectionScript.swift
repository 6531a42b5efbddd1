import HeraldTestSupport

/// A scripted misbehaviour of the connections of a mock server.
enum ConnectionScript: Sendable, Equatable {
    /// After the n-th stream, send GOAWAY naming that stream as the last one processed, serve the streams up to it,
    /// then leave the client to close the connection (closing it after a grace period if it does not).
    case goAway(afterStreams: Int)
    /// Answer n streams, then close the TCP connection without GOAWAY or TLS close_notify; later streams are never
    /// answered.
    case drop(afterStreams: Int)
    /// Like ``drop(afterStreams:)``, but the close resets the TCP connection (`SO_LINGER` 0: an RST, not a FIN).
    case reset(afterStreams: Int)
}

/// What a connection does with a newly opened stream.
enum StreamDisposition: Sendable, Equatable {
    /// Answer it; `counted` streams count towards the connection's script.
    case serve(counted: Bool)
    /// Read it but never answer: it dies with the connection (drop script).
    case hold
    /// Reset it at once with REFUSED_STREAM: it came after the GOAWAY's last stream.
    case refuse
}

/// The per-connection bookkeeping behind ``ConnectionScript``: a pure state machine fed with stream openings and
/// completions, answering with the action the connection must take.
struct ConnectionScriptState: Sendable {
    /// An action for the connection's channel.
    enum Action: Sendable, Equatable {
        case none
        /// Send GOAWAY with this last stream ID.
        case sendGoAway(lastStreamID: Int)
        /// Close gracefully: every stream up to the GOAWAY is answered; the client closes, or the connection does
        /// after ``TestServerConnection/closeGrace``.
        case close
        /// Close the TCP connection at once.
        case drop
        /// Reset the TCP connection at once (RST).
        case reset
    }

    private var opened = 0
    private var active = 0
    private var generation: Int?
    private var script: ConnectionScript?
    private var base = 0
    private var finishedCounted = 0
    private var goAwaySent = false
    private var finished = false
    private var openStreams = 0

    /// The highest number of streams this connection had open at once, by HTTP/2's count: from the client's HEADERS
    /// to the stream's close.
    private(set) var peakOpenStreams = 0

    /// Records a stream the client opened, under the server's current script (`nil` for none) and the script's
    /// generation, which changes whenever a script is set so that counting restarts from the next stream.
    mutating func streamOpened(
        streamID: Int, script current: ConnectionScript?, generation currentGeneration: Int
    ) -> (StreamDisposition, Action) {
        opened += 1
        openStreams += 1
        peakOpenStreams = max(peakOpenStreams, openStreams)
        if current == nil {
            script = nil
            generation = nil
        } else if generation != currentGeneration {
            generation = currentGeneration
            script = current
            base = opened - 1
            finishedCounted = 0
            goAwaySent = false
        }
        guard let script, !finished else {
            if finished { return (.refuse, .none) }
            return (serve(counted: false), .none)
        }
        let position = opened - base
        switch script {
        case .goAway(let limit):
            if position < limit { return (serve(counted: true), .none) }
            if position == limit {
                goAwaySent = true
                return (serve(counted: true), .sendGoAway(lastStreamID: streamID))
            }
            return (.refuse, .none)
        case .drop(let limit), .reset(let limit):
            if position <= limit { return (serve(counted: true), .none) }
            return (.hold, .none)
        }
    }

    /// Records that a stream closed at the HTTP/2 level.
    mutating func streamClosed() {
        openStreams -= 1
    }

    /// Records that a served stream has been answered (or failed).
    mutating func streamFinished(counted: Bool) -> Action {
        active -= 1
        if counted { finishedCounted += 1 }
        guard !finished, let script else { return .none }
        switch script {
        case .goAway:
            if goAwaySent && active == 0 {
                finished = true
                return .close
            }
        case .drop(let limit):
            if counted && finishedCounted == limit {
                finished = true
                return .drop
            }
        case .reset(let limit):
            if counted && finishedCounted == limit {
                finished = true
                return .reset
            }
        }
        return .none
    }

    private mutating func serve(counted: Bool) -> StreamDisposition {
        active += 1
        return .serve(counted: counted)
    }
}

/// How a mock treats the connections it accepts, before any HTTP/2 is spoken: a provider host that is sick at the
/// connection level (``MockHTTP2Server/setAcceptFault(_:)``).
public enum AcceptFault: Sendable, Equatable {
    /// The TLS handshake completes, then the server sends nothing at all (not even HTTP/2 SETTINGS) and ignores
    /// what arrives: a black-holed connection.
    case stall
    /// The server presents a certificate for the right host from a CA the client does not trust: the handshake
    /// fails.
    case untrustedCertificate
    /// The server resets the TCP connection (RST) as soon as it is accepted, before the TLS handshake.
    case reset
}
