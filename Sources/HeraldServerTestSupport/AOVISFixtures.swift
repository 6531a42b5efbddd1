import Foundation
import HTTPTypes
import HeraldCore
import HeraldTestSupport

/// AOVIS cameras, events and registrations through the real routes, for the AOVIS tests and those
/// that drive AOVIS beside another surface.
package enum AOVISFixtures {
    /// A camera with `owners` holding it ACTIVE.
    package static func camera(
        _ api: API, id: String, alias: String? = nil, name: String? = nil, owners: [String]
    ) async throws {
        var body: [String: JSONValue] = ["id": .string(id)]
        body["alias"] = alias.map(JSONValue.string)
        body["name"] = name.map(JSONValue.string)
        let created = try await api.call(
            .post, "/api/internal/devices", body: String(decoding: JSONValue.object(body).serialized(), as: UTF8.self))
        guard created.status == .created else { throw TestFailure("device: \(String(describing: created.json))") }
        for owner in owners {
            _ = try await api.call(.put, "/api/internal/devices/\(id)/owners/\(owner)", body: #"{"status":"ACTIVE"}"#)
        }
    }

    /// Posts an event and returns the response.
    package static func event(
        _ api: API, id: String, device: String, type: String = "vehicle",
        summary: String = "A dark SUV entered the driveway", cloudEventID: String? = nil
    ) async throws -> CallResponse {
        var body: [String: JSONValue] = [
            "eventId": .string(id), "deviceId": .string(device), "classifyEventType": .string(type),
            "classifySummaryShort": .string(summary), "thumbnailS3Key": .string("thumbs/\(id).jpg"),
        ]
        if let cloudEventID { body["id"] = .string(cloudEventID) }
        return try await api.call(
            .post, "/api/internal/events", body: String(decoding: JSONValue.object(body).serialized(), as: UTF8.self))
    }

    /// Registers a token through the AOVIS route and returns its installation id.
    package static func register(
        _ api: API, _ platform: String, _ token: String, as user: String
    ) async throws -> String {
        let response = try await api.aovisRegister(#"{"platform":"\#(platform)","token":"\#(token)"}"#, bearer: user)
        guard let id = response.string("push_token_id") else {
            throw TestFailure("register: \(String(describing: response.json))")
        }
        return id
    }
}
