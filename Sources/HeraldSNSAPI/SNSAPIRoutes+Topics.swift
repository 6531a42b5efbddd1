import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine

/// Topics (native channels) and their subscriptions (an installation in the channel).
extension SNSAPIRoutes {
    package func createTopic(_ call: Call) async throws -> String? {
        let name = try call.parameters.required("Name")
        guard name.count <= NotificationTarget.maxChannelLength, InstallationRules.isValidChannel(name),
            name.unicodeScalars.allSatisfy({
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                    || $0 == "_"
            })
        else {
            throw SNSAPIFailure.invalidParameter(
                "Invalid parameter: Topic Name Reason: must contain only alphanumeric characters, hyphens and "
                    + "underscores, and be 1 to \(NotificationTarget.maxChannelLength) characters long")
        }
        let topic = try await store.putSNSTopic(SNSTopic(appID: call.appID, name: name, createdAt: now()))
        return SNSXML.element("TopicArn", call.arns.string(.topic(topic.name)))
    }

    package func deleteTopic(_ call: Call) async throws -> String? {
        // Like SNS, deleting what is not there succeeds.
        let name = try topicName(call, parameter: "TopicArn")
        for subscription in try await store.deleteSNSTopic(appID: call.appID, name: name) ?? [] {
            try await leave(call, installationID: subscription.installationID, topic: name)
        }
        return nil
    }

    package func listTopics(_ call: Call) async throws -> String? {
        let page = try await store.snsTopics(
            appID: call.appID, after: try call.parameters.pageStart(), limit: SNSQueryParameters.pageSize + 1)
        let members = page.prefix(SNSQueryParameters.pageSize).map {
            "<member>\(SNSXML.element("TopicArn", call.arns.string(.topic($0.name))))</member>"
        }
        return "<Topics>\(members.joined())</Topics>" + SNSQueryParameters.nextToken(after: page.map(\.name))
    }

    package func subscribe(_ call: Call) async throws -> String? {
        let topic = try await topic(call, parameter: "TopicArn")
        let proto = try call.parameters.required("Protocol")
        guard proto == "application" else {
            throw SNSAPIFailure.invalidParameter(
                "Invalid parameter: Protocol Reason: only application endpoints are supported here")
        }
        var (installation, _) = try await endpoint(call, parameter: "Endpoint")
        let at = now()
        if !installation.channels.contains(topic.name) {
            let previous = installation
            installation.channels.append(topic.name)
            installation.channels = try InstallationRules.normalizeChannels(installation.channels)
            guard try await dispatcher.registrations.update(installation, from: previous, now: at) != nil else {
                throw SNSAPIFailure.notFound("Endpoint does not exist")
            }
        }
        let subscription = try await store.putSNSSubscription(
            SNSSubscription(
                appID: call.appID, id: UUID().uuidString.lowercased(), topic: topic.name,
                installationID: installation.id, createdAt: at))
        return SNSXML.element(
            "SubscriptionArn", call.arns.string(.subscription(topic: topic.name, id: subscription.id)))
    }

    package func unsubscribe(_ call: Call) async throws -> String? {
        let arn = try call.parameters.required("SubscriptionArn")
        guard case .subscription(let topic, let id)? = call.arns.parse(arn) else {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: SubscriptionArn Reason: \(arn) is not valid")
        }
        guard let subscription = try await store.snsSubscription(appID: call.appID, id: id), subscription.topic == topic
        else { throw SNSAPIFailure.notFound("Subscription does not exist") }
        _ = try await store.deleteSNSSubscription(appID: call.appID, id: id)
        try await leave(call, installationID: subscription.installationID, topic: topic)
        return nil
    }

    package func listSubscriptionsByTopic(_ call: Call) async throws -> String? {
        let topic = try await topic(call, parameter: "TopicArn")
        let page = try await store.snsSubscriptions(
            appID: call.appID, topic: topic.name, after: try call.parameters.pageStart(),
            limit: SNSQueryParameters.pageSize + 1)
        let subscriptions = page.prefix(SNSQueryParameters.pageSize)
        var installations: [String: Installation] = [:]
        for installation in try await store.installations(
            appID: call.appID, ids: subscriptions.map(\.installationID))
        {
            installations[installation.id] = installation
        }
        let members = subscriptions.compactMap { subscription -> String? in
            guard let installation = installations[subscription.installationID],
                let application = installation.attributes[Self.applicationAttribute]?.snsText
            else { return nil }
            let kind: PlatformKind =
                installation.service == .fcm ? .gcm : installation.environment == .sandbox ? .apnsSandbox : .apns
            let endpoint = call.arns.string(
                .endpoint(platform: kind.rawValue, application: application, id: installation.id))
            return "<member>" + SNSXML.element("TopicArn", call.arns.string(.topic(topic.name)))
                + SNSXML.element("Protocol", "application")
                + SNSXML.element(
                    "SubscriptionArn", call.arns.string(.subscription(topic: topic.name, id: subscription.id)))
                + SNSXML.element("Owner", call.settings.accountID) + SNSXML.element("Endpoint", endpoint)
                + "</member>"
        }
        return "<Subscriptions>\(members.joined())</Subscriptions>"
            + SNSQueryParameters.nextToken(after: page.map(\.installationID))
    }

    /// The topic's name from an ARN parameter.
    /// - Throws: `InvalidParameter` for a malformed ARN.
    package func topicName(_ call: Call, parameter: String) throws -> String {
        let arn = try call.parameters.required(parameter)
        guard case .topic(let name)? = call.arns.parse(arn) else {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: \(parameter) Reason: \(arn) is not valid")
        }
        return name
    }

    /// The topic an ARN parameter names.
    /// - Throws: `InvalidParameter` for a malformed ARN, `NotFound` for an unknown one.
    package func topic(_ call: Call, parameter: String) async throws -> SNSTopic {
        guard let topic = try await store.snsTopic(appID: call.appID, name: try topicName(call, parameter: parameter))
        else { throw SNSAPIFailure.notFound("Topic does not exist") }
        return topic
    }

    /// Takes the topic's channel off an installation.
    private func leave(_ call: Call, installationID: String, topic: String) async throws {
        guard var installation = try await store.installation(appID: call.appID, id: installationID),
            installation.channels.contains(topic)
        else { return }
        let previous = installation
        installation.channels.removeAll { $0 == topic }
        _ = try await dispatcher.registrations.update(installation, from: previous, now: now())
    }
}
