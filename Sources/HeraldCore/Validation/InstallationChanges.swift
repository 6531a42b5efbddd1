/// A validated partial update of an installation (`PATCH`): nil leaves a field as it is, and the
/// `cleared` set names optional fields the request set to null.
public struct InstallationChanges: Sendable, Equatable {
    /// The optional fields that may be cleared with an explicit null.
    public enum ClearableField: String, Sendable, CaseIterable {
        case userID = "user_id"
        case deviceID = "device_id"
        case locale, timezone
        case appVersion = "app_version"
        case osVersion = "os_version"
        case deviceModel = "device_model"
        case bundleID = "bundle_id"
    }

    public var platform: Platform?
    public var environment: PushEnvironment?
    /// A new token; it must be of the installation's service (checked against the stored record).
    public var token: JSONValue?
    /// The profile fields given.
    public var profile = InstallationProfile()
    /// Fields explicitly set to null.
    public var cleared: Set<ClearableField> = []

    /// The members a patch body may carry: every registration field but `service`, which is fixed.
    public static let fields: Set<String> = InstallationRegistration.fields.subtracting(["service"])

    /// Creates an empty change set.
    public init() {}

    /// Parses and validates a native `PATCH /v1/installations/{id}` body. The new token, if any,
    /// is validated later against the installation's service with ``resolvedToken(for:platform:)``.
    /// - Throws: `HeraldError` naming the first field at fault.
    public init(json: JSONValue) throws(HeraldError) {
        let body = try JSONObjectReader(json)
        if body.contains("service") {
            throw .invalidValue("service", code: "immutable_field", "An installation's service cannot change.")
        }
        try body.rejectUnknown(allowed: Self.fields)
        for required in ["platform", "environment", "token", "subscription", "channels", "badge", "attributes"]
        where body.isNull(required) {
            throw .invalidValue(required, code: "invalid_value", "Field '\(required)' cannot be null.")
        }
        platform = try body.enumeration("platform", as: Platform.self)
        environment = try body.enumeration("environment", as: PushEnvironment.self)
        token = body.members["token"] ?? body.members["subscription"].map { .object(["subscription": $0]) }
        profile = try InstallationProfile(body)
        cleared = Set(ClearableField.allCases.filter { body.isNull($0.rawValue) })
    }

    /// Validates the new token (if any) against the installation's service and platform.
    /// - Throws: `HeraldError` naming `token` or `subscription`.
    public func resolvedToken(for service: PushService, platform: Platform) throws(HeraldError) -> PushToken? {
        guard let token else { return nil }
        let body: JSONObjectReader
        if case .object(let wrapper) = token, let subscription = wrapper["subscription"] {
            body = try JSONObjectReader(.object(["subscription": subscription]))
        } else {
            body = try JSONObjectReader(.object(["token": token]))
        }
        return try InstallationRegistration.readToken(body, service: service, platform: platform)
    }

    /// Applies the changes to an installation (the token is applied by the caller after validation).
    /// - Throws: `HeraldError` when the resulting platform does not fit the service.
    public func apply(to installation: inout Installation) throws(HeraldError) {
        if let platform {
            try InstallationRules.validate(platform: platform, service: installation.service)
            installation.platform = platform
        }
        if let environment { installation.environment = environment }
        profile.apply(to: &installation)
        for field in cleared {
            switch field {
            case .userID: installation.userID = nil
            case .deviceID: installation.deviceID = nil
            case .locale: installation.locale = nil
            case .timezone: installation.timezone = nil
            case .appVersion: installation.appVersion = nil
            case .osVersion: installation.osVersion = nil
            case .deviceModel: installation.deviceModel = nil
            case .bundleID: installation.bundleID = nil
            }
        }
    }
}
