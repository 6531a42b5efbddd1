import Foundation

/// An SNS platform application of the SNS-compatible API: a name, its platform (`APNS`,
/// `APNS_SANDBOX`, `GCM`) and the attributes it was created with. Its endpoints are installations.
/// The SNS API dialect's records live here, beside the stores that build them; the protocol of
/// their store is the dialect's (`SNSAPIStore` in `HeraldSNSAPI`).
public struct SNSPlatformApplication: Sendable, Equatable {
    public var appID: String
    public var name: String
    /// `APNS`, `APNS_SANDBOX` or `GCM`.
    public var platform: String
    /// The attributes as given (credentials included; the API does not echo those back).
    public var attributes: [String: String]
    public var createdAt: Date

    /// Creates a platform application record.
    public init(appID: String, name: String, platform: String, attributes: [String: String], createdAt: Date) {
        self.appID = appID
        self.name = name
        self.platform = platform
        self.attributes = attributes
        self.createdAt = createdAt
    }
}

/// An SNS topic: a name, delivered to as the native channel of the same name.
public struct SNSTopic: Sendable, Equatable {
    public var appID: String
    public var name: String
    public var createdAt: Date

    /// Creates a topic record.
    public init(appID: String, name: String, createdAt: Date) {
        self.appID = appID
        self.name = name
        self.createdAt = createdAt
    }
}

/// A subscription of an endpoint (an installation) to a topic.
public struct SNSSubscription: Sendable, Equatable {
    public var appID: String
    public var id: String
    public var topic: String
    public var installationID: String
    public var createdAt: Date

    /// Creates a subscription record.
    public init(appID: String, id: String, topic: String, installationID: String, createdAt: Date) {
        self.appID = appID
        self.id = id
        self.topic = topic
        self.installationID = installationID
        self.createdAt = createdAt
    }
}

extension Installation {
    /// The attribute naming the SNS platform application of an installation made by the
    /// SNS-compatible API (an endpoint); the stores' `snsEndpoints(appID:application:after:limit:)`
    /// finds them by it.
    public static let snsPlatformApplicationAttribute = "sns_platform_application"
}
