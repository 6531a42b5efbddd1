import HeraldCore

extension MockPushService {
    /// A subscription the mock made, as a browser would hold it: the endpoint to push to and the
    /// keys to encrypt for, plus the browser's private half to decrypt with.
    public struct Subscription: Sendable {
        /// The mock's id for it: the last segment of the endpoint path.
        public var id: String
        /// `https://127.0.0.1:<port>/push/<id>`.
        public var endpoint: String
        /// The browser's keys; ``TestUserAgent/p256dh`` and ``TestUserAgent/auth`` are the
        /// subscription's `keys`.
        public var userAgent: TestUserAgent
        /// The VAPID public key (base64url) the subscription is restricted to, when it is.
        public var applicationServerKey: String?

        /// The `keys.p256dh` value.
        public var p256dh: String { userAgent.p256dh }
        /// The `keys.auth` value.
        public var auth: String { userAgent.auth }

        /// The subscription as `PushSubscription.toJSON()` gives it:
        /// `{"endpoint":"…","expirationTime":null,"keys":{"p256dh":"…","auth":"…"}}`.
        public var json: String {
            #"{"endpoint":"\#(endpoint)","expirationTime":null,"keys":{"p256dh":"\#(p256dh)","auth":"\#(auth)"}}"#
        }
    }
}
