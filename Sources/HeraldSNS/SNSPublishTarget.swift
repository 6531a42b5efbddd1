/// Where `Publish` sends a message.
public enum SNSPublishTarget: Sendable, Hashable {
    /// One platform endpoint (`TargetArn`).
    case endpoint(arn: String)
    /// A topic (`TopicArn`): every subscribed endpoint.
    case topic(arn: String)
}
