import Foundation

/// A device that produces events rather than receiving pushes: a camera, a doorbell, a sensor.
/// Users own it through ``Ownership``; its events notify its owners' installations.
public struct SourceDevice: Sendable, Equatable {
    /// The device's id, unique within its app (given by the caller or generated).
    public var id: String
    public var appID: String
    /// A second name the device is known by (AOVIS: `aoviseDeviceId`, like `aovis-n4k-3f9a2c`),
    /// unique within the app; nil when it has none.
    public var alias: String?
    /// The name people gave it ("Front door"), used in notification titles.
    public var name: String?
    public var createdAt: Date
    public var updatedAt: Date

    /// Creates a device record.
    public init(
        id: String, appID: String, alias: String? = nil, name: String? = nil, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.appID = appID
        self.alias = alias
        self.name = name
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Ids and aliases are 1 to this many characters (a source id must fit `enabled_sources`).
    public static let maxReferenceLength = Preferences.maxNameLength
    /// Names are at most this many characters.
    public static let maxNameLength = 256

    /// Whether `reference` can be a device id or alias: 1 to 100 printable ASCII characters, no spaces.
    public static func isValidReference(_ reference: String) -> Bool {
        let utf8 = reference.utf8
        return !utf8.isEmpty && utf8.count <= maxReferenceLength && utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }
}
