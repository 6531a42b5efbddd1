import HeraldCore
import Synchronization

/// The relay apps' settings as the relay reads them on each request: those at start, replaced by
/// each reload of the configuration (``HomeAssistantRelayReload``).
final class HomeAssistantRelaySettings: Sendable {
    private let current: Mutex<[(id: String, settings: HomeAssistantRelayConfiguration)]>

    /// The settings of every app; the relay serves those that turn it on.
    init(_ settings: [String: HomeAssistantRelayConfiguration]) {
        current = Mutex(Self.relayApps(settings))
    }

    /// The apps that enable the relay, in id order, with their settings.
    var apps: [(id: String, settings: HomeAssistantRelayConfiguration)] { current.withLock { $0 } }

    /// Takes a reloaded configuration's settings.
    func replace(with settings: [String: HomeAssistantRelayConfiguration]) {
        let apps = Self.relayApps(settings)
        current.withLock { $0 = apps }
    }

    private static func relayApps(
        _ settings: [String: HomeAssistantRelayConfiguration]
    ) -> [(id: String, settings: HomeAssistantRelayConfiguration)] {
        settings.filter(\.value.relay).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
