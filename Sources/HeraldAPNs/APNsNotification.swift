import Foundation
import HeraldCore
import NIOHPACK

/// One push to one device: the headers of "Sending notification requests to APNs" and the payload.
public struct APNsNotification: Sendable {
    /// The device token, hex.
    public var deviceToken: String
    public var pushType: APNsPushType
    /// The app's bundle id; the type's suffix is added to form `apns-topic`.
    public var bundleID: String
    public var priority: APNsPriority
    /// When APNs stops trying to deliver (`apns-expiration`); nil sends 0: try once, do not store.
    public var expiration: Date?
    /// `apns-collapse-id`, at most 64 bytes.
    public var collapseID: String?
    /// `apns-id`; APNs generates one when nil.
    public var apnsID: UUID?
    /// The JSON payload (see ``APNsPayload``).
    public var payload: [UInt8]

    /// Creates a notification. Background pushes are always sent with priority 5, as APNs requires.
    public init(
        deviceToken: String, pushType: APNsPushType = .alert, bundleID: String, priority: APNsPriority = .immediate,
        expiration: Date? = nil, collapseID: String? = nil, apnsID: UUID? = nil, payload: [UInt8]
    ) {
        self.deviceToken = deviceToken
        self.pushType = pushType
        self.bundleID = bundleID
        self.priority = pushType == .background ? .considerate : priority
        self.expiration = expiration
        self.collapseID = collapseID
        self.apnsID = apnsID
        self.payload = payload
    }

    /// Checks what APNs would refuse before a byte is sent: token shape, payload size, collapse id.
    /// - Throws: `APNsError` naming the field at fault.
    public func validate() throws(APNsError) {
        do {
            try InstallationRules.validateAPNsToken(deviceToken, field: "token")
        } catch {
            throw .invalidToken(error.message)
        }
        guard !payload.isEmpty else { throw .emptyPayload() }
        guard payload.count <= pushType.maxPayloadBytes else {
            throw .payloadTooLarge(size: payload.count, pushType: pushType)
        }
        if let collapseID, collapseID.utf8.count > 64 { throw .invalidCollapseID() }
    }

    /// The request headers, lower-case as HTTP/2 sends them.
    func headers(authorization: String?) -> HPACKHeaders {
        var headers = HPACKHeaders()
        headers.reserveCapacity(8)
        headers.add(name: "apns-push-type", value: pushType.rawValue)
        headers.add(name: "apns-topic", value: pushType.topic(bundleID: bundleID))
        headers.add(name: "apns-priority", value: String(priority.rawValue))
        headers.add(name: "apns-expiration", value: String(Int(expiration?.timeIntervalSince1970 ?? 0)))
        if let collapseID { headers.add(name: "apns-collapse-id", value: collapseID) }
        // Unique per request: kept out of the HPACK dynamic table.
        if let apnsID { headers.add(name: "apns-id", value: apnsID.uuidString, indexing: .nonIndexable) }
        if let authorization { headers.add(name: "authorization", value: authorization) }
        return headers
    }

    /// Whether two notifications produce the same header block.
    func sharesHeaders(with other: APNsNotification) -> Bool {
        pushType == other.pushType && bundleID == other.bundleID && priority == other.priority
            && expiration == other.expiration && collapseID == other.collapseID && apnsID == nil && other.apnsID == nil
    }
}
