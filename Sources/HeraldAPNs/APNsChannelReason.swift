/// The `reason` strings of APNs' error answers to broadcasts and channel management requests ("Handling error
/// responses from Apple Push Notification service"), kept as on the wire; a reason Apple adds later arrives as
/// ``unknown(_:)``. Device pushes have their own table (``APNsReason``).
public enum APNsChannelReason: Sendable, Hashable, CustomStringConvertible {
    case featureNotEnabled, missingChannelId, badChannelId, channelNotRegistered, badRequestParams
    case badRequestPayload, payloadEmpty, badMessageId, missingPushType, invalidPushType, cannotCreateChannelConfig
    case badExpirationDate, topicDisallowed, badPriority, badCertificate, badCertificateEnvironment, topicMismatch
    case missingProviderToken, expiredProviderToken, invalidProviderToken, badPath, methodNotAllowed
    case payloadTooLarge, tooManyRequests, tooManyProviderTokenUpdates, internalServerError, serviceUnavailable
    case shutdown
    case unknown(String)

    private static let all: [APNsChannelReason] = [
        .featureNotEnabled, .missingChannelId, .badChannelId, .channelNotRegistered, .badRequestParams,
        .badRequestPayload, .payloadEmpty, .badMessageId, .missingPushType, .invalidPushType,
        .cannotCreateChannelConfig, .badExpirationDate, .topicDisallowed, .badPriority, .badCertificate,
        .badCertificateEnvironment, .topicMismatch, .missingProviderToken, .expiredProviderToken,
        .invalidProviderToken, .badPath, .methodNotAllowed, .payloadTooLarge, .tooManyRequests,
        .tooManyProviderTokenUpdates, .internalServerError, .serviceUnavailable, .shutdown,
    ]
    private static let byWire: [String: APNsChannelReason] = Dictionary(
        uniqueKeysWithValues: all.map { ($0.wire, $0) })

    /// The reason for a wire string.
    public init(wire: String) {
        // Apple's table spells the 503 reason "Service Unavailable", with a space, where the device table has
        // "ServiceUnavailable"; both mean the one reason.
        self = Self.byWire[wire] ?? (wire == "Service Unavailable" ? .serviceUnavailable : .unknown(wire))
    }

    /// Every reason Apple documents.
    public static var documented: [APNsChannelReason] { all }

    /// The reason as APNs spells it.
    public var wire: String {
        switch self {
        case .unknown(let value): value
        case .featureNotEnabled: "FeatureNotEnabled"
        case .missingChannelId: "MissingChannelId"
        case .badChannelId: "BadChannelId"
        case .channelNotRegistered: "ChannelNotRegistered"
        case .badRequestParams: "BadRequestParams"
        case .badRequestPayload: "BadRequestPayload"
        case .payloadEmpty: "PayloadEmpty"
        case .badMessageId: "BadMessageId"
        case .missingPushType: "MissingPushType"
        case .invalidPushType: "InvalidPushType"
        case .cannotCreateChannelConfig: "CannotCreateChannelConfig"
        case .badExpirationDate: "BadExpirationDate"
        case .topicDisallowed: "TopicDisallowed"
        case .badPriority: "BadPriority"
        case .badCertificate: "BadCertificate"
        case .badCertificateEnvironment: "BadCertificateEnvironment"
        case .topicMismatch: "TopicMismatch"
        case .missingProviderToken: "MissingProviderToken"
        case .expiredProviderToken: "ExpiredProviderToken"
        case .invalidProviderToken: "InvalidProviderToken"
        case .badPath: "BadPath"
        case .methodNotAllowed: "MethodNotAllowed"
        case .payloadTooLarge: "PayloadTooLarge"
        case .tooManyRequests: "TooManyRequests"
        case .tooManyProviderTokenUpdates: "TooManyProviderTokenUpdates"
        case .internalServerError: "InternalServerError"
        case .serviceUnavailable: "ServiceUnavailable"
        case .shutdown: "Shutdown"
        }
    }

    public var description: String { wire }
}
