/// The `apns-push-type` header values and the topic each needs ("Sending notification requests to APNs").
public enum APNsPushType: String, Sendable, CaseIterable {
    case alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets

    /// The `apns-topic` for an app's bundle id: most types use the bundle id as is, some add a suffix.
    public func topic(bundleID: String) -> String {
        switch self {
        case .voip: bundleID + ".voip"
        case .complication: bundleID + ".complication"
        case .fileprovider: bundleID + ".pushkit.fileprovider"
        case .location: bundleID + ".location-query"
        case .liveactivity: bundleID + ".push-type.liveactivity"
        case .pushtotalk: bundleID + ".voip-ptt"
        case .widgets: bundleID + ".push-type.widgets"
        case .alert, .background, .mdm: bundleID
        }
    }

    /// The largest payload APNs takes for this type: 5120 bytes for VoIP, 4096 otherwise.
    public var maxPayloadBytes: Int { self == .voip ? 5120 : 4096 }
}

/// The `apns-priority` header values.
public enum APNsPriority: Int, Sendable, CaseIterable {
    /// Send now (10).
    case immediate = 10
    /// Send at a time that takes the device's power into account (5); required for background pushes.
    case considerate = 5
    /// Prioritize the device's power over everything else (1).
    case low = 1
}
