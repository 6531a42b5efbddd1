/// Why ``SigV4Verifier`` refused a request. Each error carries the code an AWS service answers
/// with in that case (`awsCode`, verbatim) and its HTTP status, so an AWS-compatible API can reply
/// as AWS does.
public struct SigV4Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable code; compare with the static members (`error.code == .signatureDoesNotMatch`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String {
            case missingAuthentication = "missing_authentication"
            case incompleteSignature = "incomplete_signature"
            case invalidAccessKey = "invalid_access_key"
            case signatureDoesNotMatch = "signature_mismatch"
            case signatureExpired = "signature_expired"
        }

        private let base: Base

        /// The request has no `Authorization` header.
        public static let missingAuthentication = Code(base: .missingAuthentication)
        /// The `Authorization` header or `X-Amz-Date` is malformed, or a signed header is missing.
        public static let incompleteSignature = Code(base: .incompleteSignature)
        /// No secret is known for the access key id.
        public static let invalidAccessKey = Code(base: .invalidAccessKey)
        /// The recomputed signature differs (wrong secret, altered request), or the credential scope
        /// names another service or region.
        public static let signatureDoesNotMatch = Code(base: .signatureDoesNotMatch)
        /// `X-Amz-Date` is more than the allowed skew away from now.
        public static let signatureExpired = Code(base: .signatureExpired)

        /// The code as snake_case text.
        public var description: String { base.rawValue }
    }

    /// What went wrong.
    public let code: Code
    /// The error code AWS answers with (`MissingAuthenticationToken`, `IncompleteSignature`,
    /// `InvalidClientTokenId`, `SignatureDoesNotMatch`).
    public let awsCode: String
    /// The HTTP status AWS answers with.
    public let status: Int
    /// A sentence for people, worded as AWS words it where AWS is known to.
    public let message: String

    /// The code and the message.
    public var description: String { "SigV4Error(\(code), \(awsCode)): \(message)" }

    static func missingAuthentication() -> Self {
        .init(
            code: .missingAuthentication, awsCode: "MissingAuthenticationToken", status: 403,
            message: "Request is missing Authentication Token")
    }
    static func incompleteSignature(_ message: String) -> Self {
        .init(code: .incompleteSignature, awsCode: "IncompleteSignature", status: 400, message: message)
    }
    static func invalidAccessKey() -> Self {
        .init(
            code: .invalidAccessKey, awsCode: "InvalidClientTokenId", status: 403,
            message: "The security token included in the request is invalid.")
    }
    static func signatureDoesNotMatch(_ message: String? = nil) -> Self {
        .init(
            code: .signatureDoesNotMatch, awsCode: "SignatureDoesNotMatch", status: 403,
            message: message
                ?? "The request signature we calculated does not match the signature you provided. Check your AWS "
                + "Secret Access Key and signing method. Consult the service documentation for details.")
    }
    // AWS's Query services answer a stale request with SignatureDoesNotMatch and this message.
    static func signatureExpired(amzDate: String, now: String, minutes: Int) -> Self {
        .init(
            code: .signatureExpired, awsCode: "SignatureDoesNotMatch", status: 403,
            message: "Signature expired: \(amzDate) is now earlier or later than \(now) allows (\(minutes) min.)")
    }
}
