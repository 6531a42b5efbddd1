import Foundation

/// Where a notification stands among the revisions of an updatable notification (docs/content.md,
/// "Updating and deleting"): the first send is revision 1, each `PATCH` and the removal the next.
/// The revisions share one counter record with Live Activities' (``counterID(_:)``), so each device
/// is claimed for a revision as a Live Activity's is (``LiveActivityClaimRule``): never sent revision
/// N after N+1, whatever the retries and nodes.
public struct NotificationRevision: Sendable, Equatable {
    /// The id of the updatable notification the revisions change (revision 1's own id).
    public var of: String
    public var number: Int
    /// Removes the notification from the devices instead of showing new content.
    public var removal: Bool

    /// Creates a revision.
    public init(of: String, number: Int, removal: Bool = false) {
        self.of = of
        self.number = number
        self.removal = removal
    }

    /// The id of the record that counts the revisions of the updatable notification `id`, and whose
    /// members are the installations it went to (no Live Activity of the API can have it).
    public static func counterID(_ id: String) -> String { counterPrefix + id }

    /// The prefix of revision counters' ids.
    public static let counterPrefix = "#notification/"

    /// The id of the record counting this notification's revisions.
    public var counterID: String { Self.counterID(of) }

    /// The data member a removal carries on every provider: the replacement key of the
    /// notification to remove (HeraldClient's `handleRemoval`, a service worker, an FCM app).
    public static let removalDataKey = "herald_remove"

    /// The stored form (`{"of", "number", "removal"}`).
    public var json: JSONValue {
        var object: [String: JSONValue] = ["of": .string(of), "number": .number(JSONNumber(number))]
        if removal { object["removal"] = .bool(true) }
        return .object(object)
    }

    /// Reads the stored form.
    /// - Throws: `HeraldError` when it is unreadable.
    public init(stored value: JSONValue) throws(HeraldError) {
        let reader = try JSONObjectReader(value, path: "revision")
        guard let of = try reader.string("of"), let number = try reader.integer("number", in: 1...Int.max) else {
            throw .internal("Stored notification revision is unreadable.")
        }
        self.init(of: of, number: number, removal: try reader.bool("removal") ?? false)
    }
}

/// The new content of an updatable notification (`PATCH /v1/notifications/{id}`): a send's
/// `payload`, `overrides` and `template`, read and checked as a send's, which replace the
/// notification's content whole. Its target, schedule, category and replacement key stay.
public struct NotificationChange: Sendable, Equatable {
    public var payload: NotificationPayload
    public var template: TemplateUse?

    /// The members a change takes.
    public static let fields: Set<String> = ["payload", "overrides", "template"]

    /// Creates a change.
    public init(payload: NotificationPayload, template: TemplateUse? = nil) {
        self.payload = payload
        self.template = template
    }

    /// Reads a `PATCH` body.
    /// - Throws: `HeraldError` naming the field at fault.
    public init(parsing body: JSONValue) throws(HeraldError) {
        let reader = try JSONObjectReader(body)
        try reader.rejectUnknown(allowed: Self.fields)
        // Read as a send's content, so every rule (and every error's field) is a send's.
        var members = reader.members
        members["target"] = .object(["all": .bool(true)])
        let send = try SendRequest(parsing: .object(members))
        if send.payload.collapseID != nil {
            throw .invalidValue(
                "payload.collapse_id", code: "replacement_key_fixed",
                "A change keeps the notification's replacement key: leave out payload.collapse_id.")
        }
        self.init(payload: send.payload, template: send.template)
    }
}
