import Foundation
import HeraldAPI
import HeraldCore

/// The body of `POST /api/internal/events`: one classified camera event, named as AOVIS's
/// `CloudEvent` names its columns.
package struct AOVISEventIntake: Sendable {
    package static let fields: Set<String> = [
        "id", "eventId", "deviceId", "classifyEventType", "classifySummaryShort", "thumbnailS3Key", "occurredAt",
    ]
    /// Summaries are stored whole up to this many characters; the push shows the first 80.
    package static let maxSummaryLength = 1000

    /// The producer's event id (a repeat returns the first event).
    package var eventID: String
    /// The id of AOVIS's `CloudEvent` record (`cloudEvent.id`): what the deep link and
    /// `cloudEventId` carry. Herald's own id stands in when the producer sends none.
    package var cloudEventID: String?
    /// The camera, by id or alias.
    package var deviceReference: String
    package var type: AOVISEventType
    package var summary: String
    package var thumbnail: String?
    package var occurredAt: Date?

    /// Validates the body.
    /// - Throws: `HeraldError` naming the field at fault.
    package init(json: JSONValue) throws(HeraldError) {
        let body = try JSONObjectReader(json)
        try body.rejectUnknown(allowed: Self.fields)
        guard let eventID = try body.string("eventId", maxLength: 255) else { throw .missingField("eventId") }
        guard let device = try body.string("deviceId", maxLength: SourceDevice.maxReferenceLength) else {
            throw .missingField("deviceId")
        }
        guard let type = try body.enumeration("classifyEventType", as: AOVISEventType.self) else {
            throw .missingField("classifyEventType")
        }
        guard let summary = try body.string("classifySummaryShort", maxLength: Self.maxSummaryLength) else {
            throw .missingField("classifySummaryShort")
        }
        self.eventID = eventID
        if let id = try body.string("id") {
            guard SourceEvent.isValidProducerID(id) else {
                throw .invalidValue(
                    "id",
                    "Field 'id' (the CloudEvent id) must be 1 to \(SourceEvent.maxProducerIDLength) characters of "
                        + "A-Z, a-z, 0-9, '-', '.', '_' and '~'.")
            }
            self.cloudEventID = id
        }
        self.deviceReference = device
        self.type = type
        self.summary = summary
        self.thumbnail = try body.string("thumbnailS3Key", maxLength: 2048)
        if let text = try body.string("occurredAt") {
            guard case .instant(let date)? = try? PushTime(parsing: text, field: "occurredAt") else {
                throw .invalidValue(
                    "occurredAt", code: "invalid_timestamp",
                    "occurredAt must be an RFC 3339 date-time with an offset, like 2026-05-17T08:30:00Z.")
            }
            self.occurredAt = date
        }
    }
}
