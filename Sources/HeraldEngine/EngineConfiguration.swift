import HeraldCore

/// How the dispatch engine works: page sizes, workers, leases, retries, lifecycle and clean-up.
public struct EngineConfiguration: Sendable {
    /// Which deliveries the ledger keeps.
    public enum DeliveryLog: String, Sendable, CaseIterable {
        /// Failures, invalid tokens, skips and expiries; not successes.
        case failures
        /// Every outcome, successes included.
        case all
    }

    /// The most recipients sent and not yet committed: what a crash can send twice. The fan-out
    /// resolves, sends and commits batches of a page divided by ``pipelineDepth``, that many in flight.
    public var pageSize: Int
    /// Batches in flight at once (sent, not yet committed) during a fan-out; at most `pageSize`.
    public var pipelineDepth: Int
    /// Recipients resolved, sent and committed together: a page shared by the batches in flight.
    public var batchSize: Int { max(1, pageSize / pipelineDepth) }
    /// Recipients per range of a large notification: a target larger than this is cut into ranges
    /// of this many, each a job that any node's worker claims, so every node works one broadcast
    /// (see ``FanoutRange``); 0 never cuts (one worker sends the whole target).
    public var rangeSize: Int
    /// Jobs processed at once (one notification each). Zero makes a node that serves the API and
    /// its direct channels but sends nothing itself (the other nodes on its database do).
    public var workers: Int
    /// How long a claimed job stays locked without renewal; a dead worker's job is taken over after it.
    public var lease: Duration
    /// How often one idle worker looks for due jobs (a new notification also wakes one, and a worker
    /// that finds a job wakes the next).
    public var pollInterval: Duration
    public var retryPolicy: RetryPolicy
    /// How long a provider that answered none of a batch's pushes (no connection, or timeouts) is
    /// paused for the app: `base`, doubling with each such batch in a row, at most `cap`. While it
    /// is paused its deliveries wait without a request, so a provider that is down sees a few
    /// requests per pause, not a retry storm, and the other providers' batches do not wait on it.
    public var unreachablePause: (base: Duration, cap: Duration)
    /// Failures in a row (no success between) that deactivate an installation.
    public var maxFailures: Int
    /// A repeated idempotency key within this window returns the first notification.
    public var idempotencyWindow: Duration
    /// Ledger policy per app id; apps not listed use `defaultDeliveryLog`.
    public var deliveryLog: [String: DeliveryLog]
    public var defaultDeliveryLog: DeliveryLog
    /// What a token the provider rejected does to its installation, per app id; apps not listed
    /// invalidate it (``RejectedTokenRule/invalidate``). Installations registered with
    /// `delete_when_invalid` count it as a failure whatever the app's rule.
    public var rejectedTokens: [String: RejectedTokenRule]
    /// Each app's budget of high-priority Live Activity pushes per activity and hour
    /// (`app.<id>.live_activities.high_priority_per_hour`); apps not listed have the default.
    public var liveActivityHighPriorityPerHour: [String: Int] = [:]
    /// How often the clean-up job runs; nil never schedules it.
    public var cleanupInterval: Duration?
    /// The clean-up rules of every app without its own (`engine.cleanup.*`).
    public var cleanupPolicy: CleanupPolicy
    /// Apps' own clean-up rules, by app id (`app.<id>.lifecycle.*`, or a dialect's documented defaults).
    public var cleanupPolicies: [String: CleanupPolicy]
    /// What the clean-up job applies: each app's own rules, the default for the rest.
    public var cleanupPlan: CleanupPlan { CleanupPlan(default: cleanupPolicy, apps: cleanupPolicies) }
    /// How long a direct channel that confirms has to confirm a notification before it is torn
    /// down and its notifications fall back to the cloud (Home Assistant's 10 seconds).
    public var channelConfirmWindow: Duration
    /// How long a notification without an expiry waits for a direct-only device to connect: FCM's
    /// longest time to live, four weeks.
    public var channelMaxWait: Duration
    /// How often a notification waiting for a direct-only device looks again (it is also woken
    /// when the device connects).
    public var channelRecheck: Duration

    /// Creates a configuration with Herald's defaults.
    public init(
        pageSize: Int = 2000, pipelineDepth: Int = 4, rangeSize: Int = 10_000, workers: Int = 8,
        lease: Duration = .seconds(60),
        pollInterval: Duration = .seconds(1),
        retryPolicy: RetryPolicy = RetryPolicy(),
        unreachablePause: (base: Duration, cap: Duration) = (.seconds(1), .seconds(30)), maxFailures: Int = 5,
        idempotencyWindow: Duration = .seconds(86_400),
        deliveryLog: [String: DeliveryLog] = [:], defaultDeliveryLog: DeliveryLog = .failures,
        rejectedTokens: [String: RejectedTokenRule] = [:],
        cleanupInterval: Duration? = .seconds(86_400), cleanupPolicy: CleanupPolicy = CleanupPolicy(),
        cleanupPolicies: [String: CleanupPolicy] = [:],
        channelConfirmWindow: Duration = .seconds(10), channelMaxWait: Duration = .seconds(28 * 86_400),
        channelRecheck: Duration = .seconds(3_600)
    ) {
        self.pageSize = max(1, pageSize)
        self.pipelineDepth = min(max(1, pipelineDepth), self.pageSize)
        self.rangeSize = max(0, rangeSize)
        self.workers = max(0, workers)
        self.lease = lease
        self.pollInterval = pollInterval
        self.retryPolicy = retryPolicy
        self.unreachablePause = (base: max(.milliseconds(1), unreachablePause.base), cap: unreachablePause.cap)
        self.maxFailures = max(1, maxFailures)
        self.idempotencyWindow = idempotencyWindow
        self.deliveryLog = deliveryLog
        self.defaultDeliveryLog = defaultDeliveryLog
        self.rejectedTokens = rejectedTokens
        self.cleanupInterval = cleanupInterval
        self.cleanupPolicy = cleanupPolicy
        self.cleanupPolicies = cleanupPolicies
        self.channelConfirmWindow = channelConfirmWindow
        self.channelMaxWait = channelMaxWait
        self.channelRecheck = channelRecheck
    }
}
