import Crypto
import Foundation
import NIOHTTP1

/// Verifies SigV4-signed requests on the server side (an AWS-compatible API receiving SDK calls):
/// reads the `Authorization` header, recomputes the signature with the secret of the access key it
/// names, compares in constant time, and checks `X-Amz-Date` against an injected clock.
///
/// The path is canonicalized from its decoded form, as the SigV4 test suite does; AWS SDKs encode
/// non-S3 paths a second time, which makes no difference for the Query API's `/`.
public struct SigV4Verifier: Sendable {
    /// How far `X-Amz-Date` may be from now, either way: AWS allows 15 minutes.
    public static let defaultMaximumSkew: TimeInterval = 15 * 60

    /// The service the credential scope must name (`sns`); nil accepts any.
    public var service: String?
    /// The region the credential scope must name; nil accepts any.
    public var region: String?
    /// How far `X-Amz-Date` may be from now, in seconds.
    public var maximumSkew: TimeInterval
    private let now: @Sendable () -> Date

    /// Creates a verifier.
    /// - Parameter now: the clock the request date is checked against.
    public init(
        service: String? = nil, region: String? = nil, maximumSkew: TimeInterval = Self.defaultMaximumSkew,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.service = service
        self.region = region
        self.maximumSkew = maximumSkew
        self.now = now
    }

    /// Verifies a request whose access key's secret is looked up by id (from a store, say).
    /// - Parameter secretAccessKey: the secret for an access key id; nil when the key is unknown.
    /// - Returns: the parsed authorization (whose `accessKeyID` is now authenticated).
    /// - Throws: `SigV4Error`: `invalidAccessKey` when the lookup finds nothing, otherwise as
    ///   ``verify(_:secretAccessKey:)``.
    public func verify(
        _ request: SigV4Request, secretAccessKey: (_ accessKeyID: String) async -> String?
    ) async throws(SigV4Error) -> SigV4Authorization {
        let authorization = try SigV4Authorization(request: request)
        guard let secret = await secretAccessKey(authorization.accessKeyID) else { throw .invalidAccessKey() }
        try verify(request, authorization: authorization, secretAccessKey: secret)
        return authorization
    }

    /// Verifies a request against the secret of the access key its `Authorization` header names.
    /// - Returns: the parsed authorization.
    /// - Throws: `SigV4Error`: `missingAuthentication`, `incompleteSignature` (malformed header or
    ///   date, a signed header absent, `host` unsigned), `signatureDoesNotMatch` (wrong secret,
    ///   altered request, another service or region), `signatureExpired` (date too far from now).
    @discardableResult
    public func verify(_ request: SigV4Request, secretAccessKey: String) throws(SigV4Error) -> SigV4Authorization {
        let authorization = try SigV4Authorization(request: request)
        try verify(request, authorization: authorization, secretAccessKey: secretAccessKey)
        return authorization
    }

    /// Verifies a request whose `Authorization` header was already parsed.
    /// - Throws: `SigV4Error` as ``verify(_:secretAccessKey:)``.
    public func verify(
        _ request: SigV4Request, authorization: SigV4Authorization, secretAccessKey: String
    ) throws(SigV4Error) {
        if let service, authorization.service != service {
            throw .signatureDoesNotMatch("Credential should be scoped to correct service: '\(service)'.")
        }
        if let region, authorization.region != region {
            throw .signatureDoesNotMatch("Credential should be scoped to a valid region: '\(region)'.")
        }
        guard let amzDate = request.headers.first(name: "x-amz-date"), let signedAt = SigV4.date(amzDate: amzDate)
        else {
            throw .incompleteSignature("Authorization requires a valid X-Amz-Date header (yyyyMMdd'T'HHmmss'Z').")
        }
        guard amzDate.hasPrefix(authorization.date) else {
            throw .signatureDoesNotMatch(
                "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: "
                    + "'\(authorization.date)' != '\(amzDate.prefix(8))'.")
        }
        let current = now()
        if abs(signedAt.timeIntervalSince(current)) > maximumSkew {
            throw .signatureExpired(
                amzDate: amzDate, now: SigV4.amzDate(current), minutes: Int(maximumSkew / 60))
        }
        guard authorization.signedHeaders.contains("host") else {
            throw .incompleteSignature("'Host' must be a signed header.")
        }
        for name in authorization.signedHeaders where request.headers[name].isEmpty {
            throw .incompleteSignature("The signed header '\(name)' is not in the request.")
        }
        let canonical = SigV4.canonicalRequest(
            request, signedHeaders: authorization.signedHeaders, payloadHash: SigV4.hexSHA256(request.body))
        let stringToSign = SigV4.stringToSign(
            amzDate: amzDate, scope: authorization.scope, canonicalRequest: canonical)
        let key = SigV4.signingKey(
            secretAccessKey: secretAccessKey, date: authorization.date, region: authorization.region,
            service: authorization.service)
        // HMAC's own validity check compares in constant time.
        guard let provided = Self.bytes(hex: authorization.signature),
            HMAC<SHA256>.isValidAuthenticationCode(provided, authenticating: Array(stringToSign.utf8), using: key)
        else {
            throw .signatureDoesNotMatch()
        }
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
