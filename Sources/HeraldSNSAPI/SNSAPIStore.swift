import Foundation
import HeraldCore

/// What the SNS-compatible API keeps beside installations (docs/architecture.md, "Adding a dialect"): platform applications,
/// topics and subscriptions, in small named tables. Endpoints are installations, found here by
/// the platform application they belong to (their `sns_platform_application` attribute). The
/// records are `HeraldCore`'s (``SNSPlatformApplication``, ``SNSTopic``, ``SNSSubscription``), as the
/// stores build them; each store implements the methods in its own module and conforms in
/// `HeraldServer` (`DialectStores.swift`), where the stores meet the dialects.
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
