import Foundation

/// An SNS platform application of the SNS-compatible API: a name, its platform (`APNS`,
/// `APNS_SANDBOX`, `GCM`) and the attributes it was created with. Its endpoints are installations.
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

/// What the SNS-compatible API keeps beside installations (docs/architecture.md, "Adding a dialect"): platform applications,
/// topics and subscriptions, in small named tables. Endpoints are installations, found here by
/// the platform application they belong to (their `sns_platform_application` attribute).
public protocol SNSAPIStore: Sendable {
    /// Creates a platform application, or replaces the attributes of the one with this name.
    func putSNSPlatformApplication(_ application: SNSPlatformApplication) async throws -> SNSPlatformApplication

    /// One platform application by name.
    func snsPlatformApplication(appID: String, name: String) async throws -> SNSPlatformApplication?

    /// A page of an app's platform applications by name, after the name `after`.
    func snsPlatformApplications(appID: String, after: String?, limit: Int) async throws -> [SNSPlatformApplication]

    /// Deletes a platform application with its endpoints (installations) and their subscriptions.
    /// - Returns: false when there was none.
    func deleteSNSPlatformApplication(appID: String, name: String) async throws -> Bool

    /// The installation holding `token` for `service`, if any.
    func installation(appID: String, service: PushService, token: String) async throws -> Installation?

    /// A page of the endpoints (installations) of a platform application, in id order after `after`.
    func snsEndpoints(appID: String, application: String, after: String?, limit: Int) async throws -> [Installation]

    /// Creates a topic unless one has this name; returns the stored one.
    func putSNSTopic(_ topic: SNSTopic) async throws -> SNSTopic

    /// One topic by name.
    func snsTopic(appID: String, name: String) async throws -> SNSTopic?

    /// A page of an app's topics by name, after the name `after`.
    func snsTopics(appID: String, after: String?, limit: Int) async throws -> [SNSTopic]

    /// Deletes a topic and its subscriptions; the subscriptions deleted are returned.
    func deleteSNSTopic(appID: String, name: String) async throws -> [SNSSubscription]?

    /// Stores a subscription unless the installation has one to the topic; returns the stored one.
    func putSNSSubscription(_ subscription: SNSSubscription) async throws -> SNSSubscription

    /// One subscription by id.
    func snsSubscription(appID: String, id: String) async throws -> SNSSubscription?

    /// A page of a topic's subscriptions in installation id order, after the installation id `after`.
    func snsSubscriptions(appID: String, topic: String, after: String?, limit: Int) async throws -> [SNSSubscription]

    /// Deletes a subscription; false when there was none.
    func deleteSNSSubscription(appID: String, id: String) async throws -> Bool
}

extension Installation {
    /// The attribute naming the SNS platform application of an installation made by the
    /// SNS-compatible API (an endpoint); ``SNSAPIStore/snsEndpoints(appID:application:after:limit:)`` finds them by it.
    public static let snsPlatformApplicationAttribute = "sns_platform_application"
}
