extension MockFCMServer {
    /// One entry of a `google.rpc.BadRequest` detail: the request field at fault and why.
    public struct FieldViolation: Sendable, Hashable {
        /// The path of the field, e.g. `message.token`.
        public var field: String?
        /// What is wrong with it.
        public var description: String

        /// Creates a field violation.
        public init(field: String?, description: String) {
            self.field = field
            self.description = description
        }
    }

    /// An answer scripted for a registration token with ``MockFCMServer/script(token:_:times:)``.
    ///
    /// A script takes effect only for sends that pass authentication and FCM's checks of the message: it stands for
    /// the state of the device or of FCM, not of the request.
    public struct ScriptedResponse: Sendable {
        let error: GoogleRPCError?
        let retryAfter: Int?
        /// How long the mock waits before answering.
        public var delay: Duration

        /// A normal `200` answer after `delay`.
        public static func success(after delay: Duration = .zero) -> ScriptedResponse {
            ScriptedResponse(error: nil, retryAfter: nil, delay: delay)
        }

        /// An error answer with a `google.rpc.Status` body.
        /// - Parameters:
        ///   - status: The HTTP status, repeated as `error.code`.
        ///   - rpcStatus: The canonical status name, e.g. `UNAVAILABLE`.
        ///   - errorCode: The FCM error code of a `google.firebase.fcm.v1.FcmError` detail, e.g. `UNREGISTERED`.
        ///   - fieldViolations: Entries of a `google.rpc.BadRequest` detail.
        ///   - retryAfter: A `Retry-After` header, in seconds.
        public static func error(
            status: Int, rpcStatus: String, message: String, errorCode: String? = nil,
            fieldViolations: [FieldViolation] = [], retryAfter: Int? = nil, after delay: Duration = .zero
        ) -> ScriptedResponse {
            var details: [GoogleRPCError.Detail] = []
            if let errorCode { details.append(.fcmError(errorCode)) }
            if !fieldViolations.isEmpty { details.append(.badRequest(fieldViolations)) }
            return ScriptedResponse(
                error: GoogleRPCError(code: status, status: rpcStatus, message: message, details: details),
                retryAfter: retryAfter, delay: delay)
        }

        /// `404 NOT_FOUND` with FCM error `UNREGISTERED`: the app instance is gone.
        public static let unregistered = ScriptedResponse.error(
            status: 404, rpcStatus: "NOT_FOUND", message: "Requested entity was not found.", errorCode: "UNREGISTERED")

        /// `400 INVALID_ARGUMENT` for a registration token FCM does not know, naming `message.token`.
        public static let invalidToken = ScriptedResponse.error(
            status: 400, rpcStatus: "INVALID_ARGUMENT",
            message: "The registration token is not a valid FCM registration token", errorCode: "INVALID_ARGUMENT",
            fieldViolations: [FieldViolation(field: "message.token", description: "Invalid registration token")])

        /// `403 PERMISSION_DENIED` with FCM error `SENDER_ID_MISMATCH`: the token belongs to another project.
        public static let senderIDMismatch = ScriptedResponse.error(
            status: 403, rpcStatus: "PERMISSION_DENIED", message: "SenderId mismatch",
            errorCode: "SENDER_ID_MISMATCH")

        /// `429 RESOURCE_EXHAUSTED` with FCM error `QUOTA_EXCEEDED`.
        public static func quotaExceeded(retryAfter: Int? = nil) -> ScriptedResponse {
            .error(
                status: 429, rpcStatus: "RESOURCE_EXHAUSTED", message: "Quota exceeded for sending messages.",
                errorCode: "QUOTA_EXCEEDED", retryAfter: retryAfter)
        }

        /// `503 UNAVAILABLE` with FCM error `UNAVAILABLE`.
        public static func unavailable(retryAfter: Int? = nil) -> ScriptedResponse {
            .error(
                status: 503, rpcStatus: "UNAVAILABLE", message: "The service is currently unavailable.",
                errorCode: "UNAVAILABLE", retryAfter: retryAfter)
        }

        /// `500 INTERNAL` with FCM error `INTERNAL`.
        public static let internalError = ScriptedResponse.error(
            status: 500, rpcStatus: "INTERNAL", message: "Internal error encountered.", errorCode: "INTERNAL")

        /// `401 UNAUTHENTICATED` with FCM error `THIRD_PARTY_AUTH_ERROR`: the APNs or Web Push credential behind
        /// the project was rejected.
        public static let thirdPartyAuthError = ScriptedResponse.error(
            status: 401, rpcStatus: "UNAUTHENTICATED", message: "Auth error from APNS or Web Push Service",
            errorCode: "THIRD_PARTY_AUTH_ERROR")
    }
}
