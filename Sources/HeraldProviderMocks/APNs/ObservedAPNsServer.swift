import HeraldTestSupport
import Synchronization

/// A ``MockAPNsServer`` that also tells the test about every answer the moment it goes out, so a test can act at an
/// exact point of a client's exchange — for instance `kill -9` the client right after a batch's last answer, while
/// it commits what it learned.
///
/// It answers exactly as ``MockAPNsServer`` does (same checks, scripts and log); only the hook is new.
///
/// ```swift
/// let apns = try await ObservedAPNsServer.start(ca: ca, credentials: [key.credential(topics: ["com.example.app"])])
/// apns.onAnswer { answer in if answer.number == 100 { kill(pid, SIGKILL) } }
/// ```
public final class ObservedAPNsServer: MockHTTP2Server {
    /// One answer as it leaves the mock.
    public struct Answer: Sendable {
        /// How many answers the mock has given, this one included.
        public var number: Int
        /// The device token from the request's path, when it named one.
        public var token: String?
        /// The status answered.
        public var status: Int
        /// The request's body.
        public var body: [UInt8]
    }

    /// Called for every answer, after its scripted delay and just before it is written; on the mock's tasks,
    /// concurrently for concurrent streams.
    public typealias AnswerHook = @Sendable (Answer) -> Void

    private let server: HTTP2TestServer
    private let endpoint: APNsEndpoint
    private let observer: Observer

    /// The HTTP/2 + TLS server the mock answers on.
    public var http2Server: HTTP2TestServer { server }

    private init(server: HTTP2TestServer, endpoint: APNsEndpoint, observer: Observer) {
        self.server = server
        self.endpoint = endpoint
        self.observer = observer
    }

    /// Starts a mock as ``MockAPNsServer/start(ca:credentials:maxConcurrentStreams:channels:)`` does, with no
    /// broadcast channels.
    /// - Throws: When a credential's key is unusable, the certificate cannot be issued, or the port cannot be bound.
    public static func start(
        ca: TestCertificateAuthority, credentials: [MockAPNsServer.Credential], maxConcurrentStreams: Int = 1000
    ) async throws -> ObservedAPNsServer {
        let endpoint = try await APNsEndpoint(credentials: credentials)
        let observer = Observer()
        let server = try await HTTP2TestServer.start(
            tls: try ca.serverTLSConfiguration(acceptingClientCertificates: true),
            maxConcurrentStreams: maxConcurrentStreams
        ) { request in
            var response = await endpoint.respond(to: request)
            // The delay is played here rather than by the server, so the hook runs as the answer leaves.
            if response.delay > .zero {
                try? await Task.sleep(for: response.delay)
                response.delay = .zero
            }
            observer.answered(request, status: response.status)
            return response
        }
        return ObservedAPNsServer(server: server, endpoint: endpoint, observer: observer)
    }

    /// Installs the hook called for every later answer (nil: none).
    public func onAnswer(_ hook: AnswerHook?) {
        observer.hook.withLock { $0.run = hook }
    }

    /// How many answers the mock has given.
    public var answerCount: Int { observer.count.load(ordering: .acquiring) }

    /// Every request received so far, oldest first, whatever the answer (recorded on arrival).
    public var requests: [MockAPNsServer.RecordedRequest] { endpoint.log.records }

    /// Waits until at least `count` requests have been received.
    /// - Throws: ``MockServerError`` (``MockServerError/isTimeout``) when `timeout` passes first.
    public func waitForRequests(count: Int, timeout: Duration = .seconds(10)) async throws {
        try await endpoint.log.wait(forCount: count, timeout: timeout)
    }

    /// Scripts the answer to the next requests for the device `token`, as ``MockAPNsServer/script(token:_:times:)``.
    public func script(token: String, _ response: MockAPNsServer.ScriptedResponse, times: Int? = nil) {
        endpoint.script(token: token, response, times: times)
    }

    private final class Observer: Sendable {
        /// The hook, a field of a struct: a closure read straight out of a `Mutex` is re-abstracted
        /// and written back one thunk deeper on every read (see `DirectChannels.Hooks`).
        let hook = Mutex(Hook())
        struct Hook {
            var run: AnswerHook?
        }
        let count = Atomic<Int>(0)

        func answered(_ request: TestHTTPRequest, status: Int) {
            let number = count.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
            guard let hook = hook.withLock({ $0.run }) else { return }
            let token: String? =
                switch APNsRequestRules.deviceToken(inPath: request.path) {
                case .success(let token): token
                case .failure: nil
                }
            hook(Answer(number: number, token: token, status: status, body: request.body))
        }
    }
}
