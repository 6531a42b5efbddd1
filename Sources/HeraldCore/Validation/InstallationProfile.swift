/// The descriptive, optional fields of an installation that registrations and patches set: who
/// and what the device is. A nil field is "not given" and leaves the stored value alone.
public struct InstallationProfile: Sendable, Equatable {
    public var userID: String?
    public var deviceID: String?
    public var channels: [String]?
    public var locale: String?
    public var timezone: String?
    public var badge: Int?
    public var appVersion: String?
    public var osVersion: String?
    public var deviceModel: String?
    public var bundleID: String?
    public var attributes: [String: JSONValue]?
    /// See ``Installation/deleteWhenInvalid``; set by dialects whose contract deletes dead tokens.
    public var deleteWhenInvalid: Bool?

    /// Creates a profile; every field defaults to "not given".
    public init(
        userID: String? = nil, deviceID: String? = nil, channels: [String]? = nil, locale: String? = nil,
        timezone: String? = nil, badge: Int? = nil, appVersion: String? = nil, osVersion: String? = nil,
        deviceModel: String? = nil, bundleID: String? = nil, attributes: [String: JSONValue]? = nil,
        deleteWhenInvalid: Bool? = nil
    ) {
        self.userID = userID
        self.deviceID = deviceID
        self.channels = channels
        self.locale = locale
        self.timezone = timezone
        self.badge = badge
        self.appVersion = appVersion
        self.osVersion = osVersion
        self.deviceModel = deviceModel
        self.bundleID = bundleID
        self.attributes = attributes
        self.deleteWhenInvalid = deleteWhenInvalid
    }

    /// Reads and validates the profile members of a native body.
    /// - Throws: `HeraldError` naming the first field at fault.
    public init(_ body: JSONObjectReader) throws(HeraldError) {
        let short = InstallationRules.maxShortText
        userID = try body.string("user_id", maxLength: short)
        deviceID = try body.string("device_id", maxLength: short)
        channels = try body.strings("channels").map { (list) throws(HeraldError) in
            try InstallationRules.normalizeChannels(list)
        }
        locale = try body.string("locale", maxLength: 64).map { (value) throws(HeraldError) in
            try InstallationRules.normalizeLocale(value)
        }
        timezone = try body.string("timezone", maxLength: 64)
        if let timezone { try InstallationRules.validateTimeZone(timezone) }
        badge = try body.integer("badge", in: 0...Int(Int32.max))
        appVersion = try body.string("app_version", maxLength: short)
        osVersion = try body.string("os_version", maxLength: short)
        deviceModel = try body.string("device_model", maxLength: short)
        bundleID = try body.string("bundle_id", maxLength: short)
        if let object = try body.object("attributes") {
            try InstallationRules.validateAttributes(object.members)
            attributes = object.members
        }
    }

    /// Copies the given fields onto an installation.
    public func apply(to installation: inout Installation) {
        if let userID { installation.userID = userID }
        if let deviceID { installation.deviceID = deviceID }
        if let channels { installation.channels = channels }
        if let locale { installation.locale = locale }
        if let timezone { installation.timezone = timezone }
        if let badge { installation.badge = badge }
        if let appVersion { installation.appVersion = appVersion }
        if let osVersion { installation.osVersion = osVersion }
        if let deviceModel { installation.deviceModel = deviceModel }
        if let bundleID { installation.bundleID = bundleID }
        if let attributes { installation.attributes = attributes }
        if let deleteWhenInvalid { installation.deleteWhenInvalid = deleteWhenInvalid }
    }
}
