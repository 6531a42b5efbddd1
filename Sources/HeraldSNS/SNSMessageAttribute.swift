/// One `MessageAttributes` entry of `Publish` (`MessageAttributes.entry.N.Name`,
/// `.Value.DataType`, `.Value.StringValue`). Binary values are not supported.
public struct SNSMessageAttribute: Sendable, Hashable {
    /// The attribute's `DataType`.
    public enum DataType: String, Sendable, Hashable {
        /// `String`.
        case string = "String"
        /// `Number`: the value is a number written as text.
        case number = "Number"
        /// `String.Array`: the value is a JSON array written as text.
        case stringArray = "String.Array"
    }

    /// The attribute's name (`AWS.SNS.MOBILE.APNS.TTL`, or one of the app's).
    public var name: String
    /// The attribute's type.
    public var dataType: DataType
    /// The attribute's value, as text (`StringValue`).
    public var value: String

    /// Creates an attribute.
    public init(name: String, dataType: DataType = .string, value: String) {
        self.name = name
        self.dataType = dataType
        self.value = value
    }

    /// The time-to-live attribute for a platform, in seconds.
    public static func timeToLive(seconds: Int, for platform: SNSPlatform) -> Self {
        Self(name: platform.ttlAttributeName, dataType: .string, value: String(seconds))
    }
}
