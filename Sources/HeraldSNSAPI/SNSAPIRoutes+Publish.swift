import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine

/// `Publish` to an endpoint (one installation) or a topic (a channel): one native notification,
/// whose payload each recipient resolves by its platform and environment (``SNSPublishMessage``).
extension SNSAPIRoutes {
    package func publish(_ call: Call) async throws -> String? {
        let parameters = call.parameters
        if parameters["PhoneNumber"] != nil {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: PhoneNumber Reason: SMS is not supported")
        }
        let target: NotificationTarget
        var endpointKey: String?
        switch (parameters["TargetArn"], parameters["TopicArn"]) {
        case (let arn?, nil) where !arn.isEmpty:
            let (installation, _) = try await endpoint(call, parameter: "TargetArn")
            guard installation.valid else { throw SNSAPIFailure.endpointDisabled() }
            target = NotificationTarget(audience: .installationIDs([installation.id]))
            endpointKey = Self.platformKey(of: installation).rawValue
        case (nil, let arn?) where !arn.isEmpty:
            let topic = try await topic(call, parameter: "TopicArn")
            target = NotificationTarget(audience: .channels([topic.name]))
        default:
            throw SNSAPIFailure.invalidParameter(
                "Invalid parameter: TopicArn or TargetArn Reason: exactly one of them is required")
        }
        guard let message = parameters["Message"], !message.isEmpty else {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: Empty message")
        }
        guard message.utf8.count <= 262_144 else {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: Message too long")
        }
        let translated = try SNSPublishMessage(
            message: message, structure: parameters["MessageStructure"], endpointKey: endpointKey,
            attributes: parameters.messageAttributes(), now: now())
        var request = SendRequest(
            target: target, payload: translated.payload, source: Self.settingsKey, respectPreferences: false)
        request.dialect = Self.settingsKey
        switch try await dispatcher.submit(request, appID: call.appID) {
        case .accepted(let notification, _):
            return SNSXML.element("MessageId", notification.id)
        case .dryRun:
            throw SNSAPIFailure.internalError()
        }
    }

    /// The key of a structured message an endpoint reads: the one its installation's delivery resolves
    /// (``SNSPublishMessage``) — `GCM` on Android, `APNS_SANDBOX` for a sandbox Apple token, else `APNS`.
    static func platformKey(of installation: Installation) -> PlatformKind {
        if installation.service == .fcm { return .gcm }
        return installation.environment == .sandbox ? .apnsSandbox : .apns
    }
}
