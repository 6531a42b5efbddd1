import HeraldCore

/// What a push service answered to one push.
public struct WebPushResponse: Sendable, Equatable {
    /// HTTP status; 0 when no answer arrived (connection error or timeout).
    public var status: Int
    /// The `Location` header of a 201: the push message resource, the push service's id for it.
    public var location: String?
    /// The error body as text, shortened to ``WebPushResponseClassifier/maxReasonLength``; nil on success.
    public var reason: String?
    /// The HTTP version the push went over; nil when nothing was sent.
    public var httpVersion: WebPushHTTPVersion?
    /// The single outcome the engine acts on.
    public var outcome: DeliveryOutcome

    /// Creates a response.
    public init(
        status: Int, location: String? = nil, reason: String? = nil, httpVersion: WebPushHTTPVersion? = nil,
        outcome: DeliveryOutcome
    ) {
        self.status = status
        self.location = location
        self.reason = reason
        self.httpVersion = httpVersion
        self.outcome = outcome
    }
}
