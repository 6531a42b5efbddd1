import Foundation
import HeraldCore

/// One route to devices (a push provider, or the direct channel), registered per app under the
/// service it delivers through. The engine knows transports only through this protocol: a new route
/// is a new conforming type and a line where an app's transports are built.
public protocol Transport: Sendable {
    /// The service whose installations this transport delivers to.
    var service: PushService { get }

    /// Whether the transport has credentials to deliver with at all. One without is not asked to
    /// ``validate(_:now:)``: nothing would be sent through it (each delivery fails for want of
    /// configuration), so its limit must not refuse what the others can deliver.
    var isConfigured: Bool { get }

    /// Checks that the notification, rendered for this provider with the largest values it could
    /// carry (badge, token), fits the provider's limit.
    /// - Throws: `HeraldError` `payload_too_large` naming the provider and the size.
    func validate(_ notification: PushNotification, now: Date) throws(HeraldError)

    /// Renders and sends each push; one result per push, in the order given.
    func send(_ pushes: [OutgoingPush], of notification: PushNotification, now: Date) async -> [TransportResult]

    /// Closes the transport's connections.
    func shutdown() async

    /// Why a delivery to `installation` would fail for want of configuration (no credentials for
    /// its environment, no topic), or nil when the transport can deliver to it.
    func configurationProblem(for installation: Installation) -> String?

    /// The use of the transport's HTTP/2 connections now; nil for a transport without a pool.
    var connectionStatistics: ConnectionPoolStatistics? { get }
}

extension Transport {
    /// A transport without an HTTP/2 pool has no connection statistics.
    public var connectionStatistics: ConnectionPoolStatistics? { nil }

    /// A transport with nothing to configure is always configured.
    public var isConfigured: Bool { true }

    /// A transport with nothing to configure can deliver to any installation of its service.
    public func configurationProblem(for installation: Installation) -> String? { nil }
}

/// What a transport sends to one recipient: the rendered content's inputs.
public struct OutgoingPush: Sendable {
    public var recipient: Recipient
    /// The badge to send (after an increment), if any.
    public var badge: Int?
    public var soundEnabled: Bool

    /// Creates a push.
    public init(recipient: Recipient, badge: Int?, soundEnabled: Bool) {
        self.recipient = recipient
        self.badge = badge
        self.soundEnabled = soundEnabled
    }
}

/// A provider's answer to one push.
public struct TransportResult: Sendable, Equatable {
    public var outcome: DeliveryOutcome
    /// True when the provider asked every sender to slow down (not only this device).
    public var providerWide: Bool
    /// True when the provider gave no answer at all: no connection could be made (refused, TLS
    /// failed, no HTTP/2 preface in time) or the request timed out. When every push of a batch to
    /// one provider ends this way, the engine pauses the provider for the app (see `ProviderGate`).
    public var unreachable: Bool

    /// Set only by the direct channel (``DirectTransport``), for a push it did not settle; nil for
    /// every provider's answer. `outcome` is then what the push comes to if nothing else is done
    /// with it: a transient failure.
    public var handback: Handback?

    /// What the direct channel did with a push it did not settle.
    public enum Handback: Sendable, Equatable {
        /// Written to a channel that confirms: it waits (pending, reason `confirming`) for the
        /// confirmation, the end of the window at `until`, or the channel's close.
        case confirming(until: Date)
        /// Not taken: the device's cloud route takes it (a direct-only device waits for its channel).
        /// `reason` is recorded as `fell_back`; nil: the device was not connected, nothing to record.
        case fellBack(reason: String?)
    }

    /// Creates a result.
    public init(_ outcome: DeliveryOutcome, providerWide: Bool = false, unreachable: Bool = false) {
        self.outcome = outcome
        self.providerWide = providerWide
        self.unreachable = unreachable
    }

    /// A push the direct channel hands back to the engine.
    public static func handedBack(_ handback: Handback) -> TransportResult {
        var result = TransportResult(.retry(reason: "the direct channel did not settle it", after: nil))
        result.handback = handback
        return result
    }
}

/// A transport that keeps state at its provider for each installation (an SNS platform endpoint):
/// told when an installation of its service is registered, changed or deleted.
public protocol InstallationLifecycle: Transport {
    /// An installation was registered or changed (`previous`: as it was before; nil when new).
    /// - Returns: The provider's id of the installation's endpoint to store, or nil to keep what is
    ///   stored (a provider that did not answer is tried again at the next send).
    func registered(_ installation: Installation, previous: Installation?) async -> String?

    /// An installation was deleted: its provider-side state goes too.
    func removed(_ installation: Installation) async
}

/// A transport that reaches every installation of its service with one send (an SNS topic its
/// endpoints are subscribed to). A notification to everyone that may go this way is sent once, to
/// a broadcast recipient (``Recipient/init(broadcastTo:service:)``), and the service's
/// installations are left out of its fan-out.
public protocol BroadcastRoute: Transport {
    /// The address that reaches every installation of the service at once, when this notification
    /// may go that way (nil: it goes to each installation).
    func broadcastAddress(for notification: PushNotification) -> String?
}
