import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird
import NIOCore

/// A relay answer other than `201`, in the body Home Assistant reads (`mobile_app` notify):
/// `errorMessage` (appended to its "Internal server error, please try again later:" line), `message`
/// (logged as is, at warning level for a `429`), and a stable `errorType`; a `429` also carries the
/// `target` and its `rateLimits`.
package struct HomeAssistantRelayFailure: Error, Sendable {
    package var status: HTTPResponse.Status
    /// Stable: `InvalidRequest`, `UnknownToken`, `UnknownApp`, `InvalidToken`, `PayloadTooLarge`, `RateLimited`,
    /// `ProviderMisconfigured`, `ProviderUnavailable`, `InternalError`.
    package var errorType: String
    /// What went wrong, short.
    package var errorMessage: String
    /// What went wrong and how to fix it, for Home Assistant's log.
    package var message: String
    package var target: String?
    package var rateLimits: HomeAssistantRateLimits?
    /// Seconds before the request may succeed (`Retry-After`), for a `429` that is not a token's.
    package var retryAfter: Int?

    /// The request body is not a push request.
    package static func invalidRequest(_ error: HeraldError) -> Self {
        Self(
            status: .badRequest, errorType: "InvalidRequest", errorMessage: error.message,
            message: "Herald could not read the push request: \(error.message) Check the data of the notify call.")
    }

    /// The body is larger than the server takes.
    package static func bodyTooLarge(limit: Int) -> Self {
        Self(
            status: .contentTooLarge, errorType: "PayloadTooLarge",
            errorMessage: "The request body is larger than \(limit) bytes",
            message:
                "The notification is larger than the \(limit) bytes Herald accepts. Send a shorter message or less data."
        )
    }

    /// No relay-enabled app has an installation with this token.
    package static func unknownToken() -> Self {
        Self(
            status: .notFound, errorType: "UnknownToken",
            errorMessage: "This device's push token is not registered with Herald",
            message:
                "This device's push token is not registered with Herald, or its app does not enable the Home "
                + "Assistant relay. Open the Companion app so it registers its token again, then reload the "
                + "mobile_app integration.")
    }

    /// Several apps enable the relay and none lists this Companion app in `home_assistant.app_ids`.
    package static func unknownCompanionApp(_ companionAppID: String) -> Self {
        Self(
            status: .notFound, errorType: "UnknownApp",
            errorMessage: "No Herald app serves the Companion app '\(companionAppID)'",
            message:
                "This device's push token is not registered with Herald, and no Herald app takes new tokens from the "
                + "Companion app '\(companionAppID)'. The Herald administrator must add it to "
                + "app.<id>.home_assistant.app_ids of the app that serves it.")
    }

    /// Too many push tokens Herald had never seen came from this address within a minute.
    package static func tooManyNewTokens(perMinute: Int, retryAfter: Int) -> Self {
        Self(
            status: .tooManyRequests, errorType: "RateLimited",
            errorMessage: "Too many new push tokens from this address",
            message:
                "Herald registers at most \(perMinute) new push tokens a minute from one address. It accepts new "
                + "tokens again in \(retryAfter) seconds.",
            retryAfter: retryAfter)
    }

    /// The provider said the token is dead; the installation is invalidated (and its retry is not due).
    package static func invalidatedToken() -> Self {
        Self(
            status: .gone, errorType: "InvalidToken",
            errorMessage: "The push service no longer accepts this device's token",
            message:
                "The push service reported this device's token as no longer valid. Open the Companion app so it "
                + "registers a new token, then reload the mobile_app integration. Herald tries the token again once "
                + "a day (home_assistant.invalid_retry_hours) and after its configuration is reloaded.")
    }

    /// The notification does not fit the provider's limit.
    package static func payloadTooLarge(_ error: HeraldError) -> Self {
        Self(
            status: .contentTooLarge, errorType: "PayloadTooLarge", errorMessage: error.message,
            message: "\(error.message) Send a shorter message or less data.")
    }

    /// The token's daily maximum is reached.
    package static func rateLimited(target: String, rateLimits: HomeAssistantRateLimits) -> Self {
        Self(
            status: .tooManyRequests, errorType: "RateLimited",
            errorMessage: "The daily maximum of \(rateLimits.maximum) notifications is reached",
            message:
                "This device has reached its maximum of \(rateLimits.maximum) notifications per day. Notifications "
                + "are accepted again after the reset at \(UTCDay.timestamp(rateLimits.resetsAt)) (midnight UTC).",
            target: target, rateLimits: rateLimits)
    }

    /// The app cannot deliver to the device's service.
    package static func providerMisconfigured(_ problem: String, appID: String) -> Self {
        Self(
            status: .internalServerError, errorType: "ProviderMisconfigured", errorMessage: problem,
            message:
                "Herald cannot deliver this notification: \(problem). The Herald administrator must configure "
                + "the push provider of app '\(appID)' (app.\(appID).apns / app.\(appID).fcm).")
    }

    /// The engine or its store cannot take the notification now.
    package static func providerUnavailable(_ detail: String) -> Self {
        Self(
            status: .serviceUnavailable, errorType: "ProviderUnavailable", errorMessage: detail,
            message: "Herald cannot take notifications right now (\(detail)). Try again later.")
    }

    /// Anything else.
    package static func internalError() -> Self {
        Self(
            status: .internalServerError, errorType: "InternalError", errorMessage: "An unexpected error occurred",
            message: "Herald failed unexpectedly while relaying the notification. Try again later.")
    }

    /// The JSON answer.
    package func response() -> Response {
        var object: [String: JSONValue] = [
            "errorType": .string(errorType), "errorMessage": .string(errorMessage), "message": .string(message),
        ]
        if let target { object["target"] = .string(target) }
        if let rateLimits { object["rateLimits"] = rateLimits.json }
        var response = HomeAssistantRelayRoutes.json(status: status, .object(object))
        if let retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }
}
