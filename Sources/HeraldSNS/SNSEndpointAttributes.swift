/// A platform endpoint's attributes (`SetEndpointAttributes`, `GetEndpointAttributes`,
/// `CreatePlatformEndpoint`): the three SNS documents, plus any other verbatim.
public struct SNSEndpointAttributes: Sendable, Hashable {
    /// `Token`: the device token (APNs) or registration token (FCM).
    public var token: String?
    /// `Enabled`: SNS sets it to false when the provider reports the token invalid; set it back to
    /// true after the app registers the token again.
    public var enabled: Bool?
    /// `CustomUserData`: free text SNS keeps with the endpoint and never uses (under 2 KB).
    public var customUserData: String?
    /// Any other attribute, by its SNS name.
    public var other: [String: String]

    /// Creates attributes; nil fields are left out of a request.
    public init(
        token: String? = nil, enabled: Bool? = nil, customUserData: String? = nil, other: [String: String] = [:]
    ) {
        self.token = token
        self.enabled = enabled
        self.customUserData = customUserData
        self.other = other
    }

    /// Reads attributes as SNS names them (`Enabled` is `true` or `false`).
    public init(wire: [String: String]) {
        var other = wire
        token = other.removeValue(forKey: "Token")
        enabled = other.removeValue(forKey: "Enabled").map { $0.lowercased() == "true" }
        customUserData = other.removeValue(forKey: "CustomUserData")
        self.other = other
    }

    /// The attributes as SNS names them.
    public var wire: [String: String] {
        var wire = other
        if let token { wire["Token"] = token }
        if let enabled { wire["Enabled"] = enabled ? "true" : "false" }
        if let customUserData { wire["CustomUserData"] = customUserData }
        return wire
    }
}
