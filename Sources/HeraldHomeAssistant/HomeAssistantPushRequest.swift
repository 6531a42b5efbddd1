import HeraldAPI
import HeraldCore

/// What Home Assistant's `mobile_app` notify platform POSTs to a registration's `push_url`
/// (`homeassistant/components/mobile_app/notify.py`): the message, an optional title, the device's
/// push token, the registration's identity and the service call's free `data`.
package struct HomeAssistantPushRequest: Sendable, Equatable {
    /// The registration the notify service was called for.
    package struct Registration: Sendable, Equatable {
        /// The Companion app's id (`io.robbie.HomeAssistant`, `io.homeassistant.companion.android`).
        package var appID: String
        package var appVersion: String
        package var osVersion: String?
        /// The registration's webhook id (Home Assistant 2021.11 and later).
        package var webhookID: String?
    }

    /// The notification text, or a Companion command (`request_location_update`, `clear_badge`, …).
    package var message: String
    package var title: String?
    /// The device's push token, as the app registered it with Herald.
    package var pushToken: String
    package var registration: Registration
    /// The service call's `data`: Companion options and provider blocks.
    package var data: [String: JSONValue]

    /// The longest push token read (FCM tokens are at most 4096 characters; APNs at most 2048).
    package static let maxTokenLength = 4096
    /// Registration strings are at most this long.
    package static let maxRegistrationText = 256

    /// Reads a push request body. Members Home Assistant may add later are ignored.
    /// - Throws: `HeraldError` naming the member at fault.
    package init(parsing body: JSONValue) throws(HeraldError) {
        let reader = try JSONObjectReader(body)
        message = try reader.requiredString("message")
        title = try reader.string("title")
        guard let token = try reader.string("push_token", maxLength: Self.maxTokenLength) else {
            throw .missingField("push_token")
        }
        pushToken = token
        guard let info = try reader.object("registration_info") else { throw .missingField("registration_info") }
        registration = try Registration(parsing: info)
        data = try reader.object("data")?.members ?? [:]
    }

    /// Reads a rate-limit check body: only the push token counts.
    /// - Throws: `HeraldError` naming the member at fault.
    package static func token(parsing body: JSONValue) throws(HeraldError) -> String {
        let reader = try JSONObjectReader(body)
        guard let token = try reader.string("push_token", maxLength: maxTokenLength) else {
            throw .missingField("push_token")
        }
        return token
    }
}

extension HomeAssistantPushRequest.Registration {
    /// Reads `registration_info`.
    /// - Throws: `HeraldError` naming the member at fault.
    package init(parsing reader: JSONObjectReader) throws(HeraldError) {
        let limit = HomeAssistantPushRequest.maxRegistrationText
        guard let appID = try reader.string("app_id", maxLength: limit) else {
            throw .missingField(reader.name("app_id"))
        }
        guard let appVersion = try reader.string("app_version", maxLength: limit, minLength: 0) else {
            throw .missingField(reader.name("app_version"))
        }
        self.init(
            appID: appID, appVersion: appVersion,
            osVersion: try reader.string("os_version", maxLength: limit, minLength: 0),
            webhookID: try reader.string("webhook_id", maxLength: limit, minLength: 0))
    }
}
