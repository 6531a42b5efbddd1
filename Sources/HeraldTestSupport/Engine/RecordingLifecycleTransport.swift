import Foundation
import HeraldCore
import Synchronization

/// A transport that keeps provider-side state per installation in memory, as SNS keeps a platform
/// endpoint: it records each lifecycle call the engine makes and answers `registered` with an
/// endpoint id of its own, so tests see that every path that changes installations tells it.
public final class RecordingLifecycleTransport: InstallationLifecycle {
    /// One lifecycle call.
    public enum Call: Sendable, Equatable {
        case registered(installationID: String, tokenChanged: Bool)
        case removed(installationID: String, endpoint: String?)
    }

    public let service: PushService
    private let state = Mutex<[Call]>([])

    /// A transport for `service`.
    public init(service: PushService = .apns) {
        self.service = service
    }

    /// The calls so far, in order.
    public var calls: [Call] { state.withLock { $0 } }

    /// The endpoint id this transport gives an installation.
    public static func endpoint(of installationID: String) -> String { "endpoint:\(installationID)" }

    public func registered(_ installation: Installation, previous: Installation?) async -> String? {
        state.withLock {
            $0.append(.registered(installationID: installation.id, tokenChanged: previous?.token != installation.token))
        }
        return Self.endpoint(of: installation.id)
    }

    public func removed(_ installation: Installation) async {
        state.withLock { $0.append(.removed(installationID: installation.id, endpoint: installation.snsEndpointARN)) }
    }

    public func validate(_ notification: PushNotification, now: Date) throws(HeraldError) {}

    public func send(_ pushes: [OutgoingPush], of notification: PushNotification, now: Date) async -> [TransportResult]
    {
        pushes.map { _ in TransportResult(.delivered(providerID: nil)) }
    }

    public func shutdown() async {}
}
