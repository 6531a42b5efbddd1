import Crypto
import Foundation
import NIOHTTP1

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`, "Create a signed AWS API request" in the IAM user
/// guide): the canonical request, the string to sign, the signing key and the `Authorization`
/// header. The steps are pure static functions, shared by the signer here and by
/// ``SigV4Verifier`` on the server side, and each is checked against AWS's SigV4 test suite.
public struct SigV4: Sendable {
    /// The algorithm name that opens the `Authorization` header and the string to sign.
    public static let algorithm = "AWS4-HMAC-SHA256"
    /// The hex SHA-256 of an empty payload.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// What one signing produced, kept for logs and tests.
    public struct Signature: Sendable, Equatable {
        /// The canonical request (task 1).
        public var canonicalRequest: String
        /// The string to sign (task 2).
        public var stringToSign: String
        /// The signed header names, lower-cased, sorted and `;`-joined.
        public var signedHeaders: String
        /// The signature, 64 lower-case hex characters (task 3).
        public var signature: String
        /// The `Authorization` header value (task 4).
        public var authorization: String
    }

    /// The key that signs.
    public var credentials: AWSCredentials
    /// The region in the credential scope (`us-east-1`).
    public var region: String
    /// The service in the credential scope (`sns`).
    public var service: String

    /// Creates a signer for one region and service.
    public init(credentials: AWSCredentials, region: String, service: String) {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// Signs a request in place: sets `X-Amz-Date` (and `X-Amz-Security-Token` when the credentials
    /// carry a session token, signed as the test suite's `post-sts-header-before` case does), then
    /// adds `Authorization`. Every header of the request is signed; the caller sets `Host`.
    @discardableResult
    public func sign(_ request: inout SigV4Request, date: Date) -> Signature {
        let amzDate = Self.amzDate(date)
        request.headers.remove(name: "authorization")
        request.headers.replaceOrAdd(name: "x-amz-date", value: amzDate)
        if let token = credentials.sessionToken {
            request.headers.replaceOrAdd(name: "x-amz-security-token", value: token)
        }
        let names = Self.headerNames(of: request.headers)
        let canonical = Self.canonicalRequest(
            request, signedHeaders: names, payloadHash: Self.hexSHA256(request.body))
        let scope = Self.scope(date: String(amzDate.prefix(8)), region: region, service: service)
        let stringToSign = Self.stringToSign(amzDate: amzDate, scope: scope, canonicalRequest: canonical)
        let key = Self.signingKey(
            secretAccessKey: credentials.secretAccessKey, date: String(amzDate.prefix(8)), region: region,
            service: service)
        let signature = Self.signature(signingKey: key, stringToSign: stringToSign)
        let signedHeaders = names.joined(separator: ";")
        let authorization =
            "\(Self.algorithm) Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), "
            + "Signature=\(signature)"
        request.headers.add(name: "authorization", value: authorization)
        return Signature(
            canonicalRequest: canonical, stringToSign: stringToSign, signedHeaders: signedHeaders,
            signature: signature, authorization: authorization)
    }

    // MARK: - The steps

    /// The canonical request: method, canonical URI, canonical query string, canonical headers,
    /// signed headers and payload hash, one per line.
    /// - Parameters:
    ///   - signedHeaders: the lower-case names to sign, sorted.
    ///   - payloadHash: the hex SHA-256 of the body.
    public static func canonicalRequest(
        _ request: SigV4Request, signedHeaders: [String], payloadHash: String
    )
        -> String
    {
        [
            request.method.uppercased(),
            canonicalURI(request.path),
            canonicalQuery(request.query),
            canonicalHeaders(request.headers, signedHeaders: signedHeaders),
            signedHeaders.joined(separator: ";"),
            payloadHash,
        ].joined(separator: "\n")
    }

    /// The string to sign: algorithm, request date, credential scope and the hex SHA-256 of the
    /// canonical request.
    public static func stringToSign(amzDate: String, scope: String, canonicalRequest: String) -> String {
        [algorithm, amzDate, scope, hexSHA256(Array(canonicalRequest.utf8))].joined(separator: "\n")
    }

    /// The credential scope `yyyyMMdd/region/service/aws4_request`.
    public static func scope(date: String, region: String, service: String) -> String {
        "\(date)/\(region)/\(service)/aws4_request"
    }

    /// The signing key: HMAC-SHA256 chained over date, region, service and `aws4_request`, keyed
    /// first with `"AWS4" + secret`; each step keys the next with its raw 32 bytes.
    /// - Parameter date: the scope's date, `yyyyMMdd`.
    public static func signingKey(
        secretAccessKey: String, date: String, region: String, service: String
    )
        -> SymmetricKey
    {
        var key = SymmetricKey(data: Array("AWS4\(secretAccessKey)".utf8))
        for part in [date, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    /// The signature: the hex HMAC-SHA256 of the string to sign under the signing key.
    public static func signature(signingKey: SymmetricKey, stringToSign: String) -> String {
        hex(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: signingKey))
    }

    /// The canonical URI: each path segment URI-encoded, slashes kept; an empty path is `/`.
    public static func canonicalURI(_ path: String) -> String {
        path.isEmpty ? "/" : uriEncode(path, keepingSlash: true)
    }

    /// The canonical query string: names and values URI-encoded, sorted by name then value (by
    /// byte, so upper case sorts before lower case), joined as `name=value&…`.
    public static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        query.map { (name: uriEncode($0.name), value: uriEncode($0.value)) }
            .sorted { left, right in
                left.name == right.name
                    ? left.value.utf8.lexicographicallyPrecedes(right.value.utf8)
                    : left.name.utf8.lexicographicallyPrecedes(right.name.utf8)
            }
            .map { "\($0.name)=\($0.value)" }
            .joined(separator: "&")
    }

    /// The canonical headers block: for each signed name, `name:value\n`, values of a repeated
    /// header comma-joined in order, each trimmed with runs of spaces collapsed to one.
    public static func canonicalHeaders(_ headers: HTTPHeaders, signedHeaders: [String]) -> String {
        var values: [String: [String]] = [:]
        for (name, value) in headers {
            values[name.lowercased(), default: []].append(normalizedHeaderValue(value))
        }
        return signedHeaders.map { "\($0):\((values[$0] ?? []).joined(separator: ","))\n" }.joined()
    }

    /// The lower-cased, de-duplicated, sorted names of every header but `Authorization`.
    public static func headerNames(of headers: HTTPHeaders) -> [String] {
        Set(headers.map { $0.name.lowercased() }).subtracting(["authorization"]).sorted()
    }

    /// URI-encodes as SigV4 requires: every byte but the unreserved `A-Z a-z 0-9 - _ . ~` becomes
    /// `%XX` with upper-case hex (so a space is `%20`, never `+`); `/` is kept when asked.
    public static func uriEncode(_ text: String, keepingSlash: Bool = false) -> String {
        var encoded = ""
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: "/") where keepingSlash:
                encoded.append("/")
            default:
                encoded.append("%")
                encoded.append(hexDigits[Int(byte >> 4)])
                encoded.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return encoded
    }

    /// The `X-Amz-Date` form of a time: `yyyyMMdd'T'HHmmss'Z'` in UTC.
    public static func amzDate(_ date: Date) -> String {
        let parts = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return pad(parts.year, 4) + pad(parts.month, 2) + pad(parts.day, 2) + "T" + pad(parts.hour, 2)
            + pad(parts.minute, 2) + pad(parts.second, 2) + "Z"
    }

    /// Reads an `X-Amz-Date` value; nil when it is not `yyyyMMdd'T'HHmmss'Z'`.
    public static func date(amzDate text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
            let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        return utcCalendar.date(
            from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
    }

    /// The lower-case hex SHA-256 of bytes.
    public static func hexSHA256(_ bytes: [UInt8]) -> String {
        hex(SHA256.hash(data: bytes))
    }

    // MARK: - Helpers

    private static let hexDigits: [Character] = Array("0123456789ABCDEF")
    private static let lowerHexDigits: [Character] = Array("0123456789abcdef")

    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var text = ""
        for byte in bytes {
            text.append(lowerHexDigits[Int(byte >> 4)])
            text.append(lowerHexDigits[Int(byte & 0x0F)])
        }
        return text
    }

    /// Leading and trailing spaces and tabs removed, runs of spaces inside collapsed to one.
    private static func normalizedHeaderValue(_ value: String) -> String {
        var result = ""
        var pendingSpace = false
        for character in value {
            if character == " " || character == "\t" {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(character)
            }
        }
        return result
    }
}
