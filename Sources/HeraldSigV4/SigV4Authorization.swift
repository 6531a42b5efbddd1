import NIOHTTP1

/// A parsed SigV4 `Authorization` header:
/// `AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/<service>/aws4_request, SignedHeaders=<a;b>, Signature=<hex>`.
public struct SigV4Authorization: Sendable, Equatable {
    /// The access key id the request claims; look its secret up to verify.
    public var accessKeyID: String
    /// The scope's date, `yyyyMMdd`.
    public var date: String
    /// The scope's region.
    public var region: String
    /// The scope's service.
    public var service: String
    /// The signed header names, lower case, in the order given.
    public var signedHeaders: [String]
    /// The signature, 64 lower-case hex characters.
    public var signature: String

    /// The credential scope `date/region/service/aws4_request`.
    public var scope: String { SigV4.scope(date: date, region: region, service: service) }

    /// Parses an `Authorization` header value.
    /// - Throws: `SigV4Error` `incompleteSignature` naming what is missing or malformed.
    public init(header: String) throws(SigV4Error) {
        let prefix = SigV4.algorithm + " "
        guard header.hasPrefix(prefix) else {
            throw .incompleteSignature("Authorization header requires the \(SigV4.algorithm) algorithm.")
        }
        var fields: [String: String] = [:]
        for part in header.dropFirst(prefix.count).split(separator: ",") {
            let pair = part.trimmingSpaces.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            fields[String(pair[0])] = String(pair[1])
        }
        guard let credential = fields["Credential"], let signed = fields["SignedHeaders"],
            let signature = fields["Signature"]
        else {
            throw .incompleteSignature(
                "Authorization header requires 'Credential', 'SignedHeaders' and 'Signature' parameters.")
        }
        // The access key id cannot hold a slash, so the last four parts are the scope.
        let scope = credential.split(separator: "/", omittingEmptySubsequences: false)
        guard scope.count == 5, !scope[0].isEmpty, scope[1].count == 8, !scope[2].isEmpty, !scope[3].isEmpty,
            scope[4] == "aws4_request"
        else {
            throw .incompleteSignature(
                "Credential should be '<access key>/<yyyyMMdd>/<region>/<service>/aws4_request', got '\(credential)'.")
        }
        let names = signed.split(separator: ";").map { $0.lowercased() }
        guard !names.isEmpty else { throw .incompleteSignature("SignedHeaders is empty.") }
        let hexDigits = Set("0123456789abcdef")
        guard signature.count == 64, signature.allSatisfy(hexDigits.contains) else {
            throw .incompleteSignature("Signature should be 64 lower-case hex characters.")
        }
        accessKeyID = String(scope[0])
        date = String(scope[1])
        region = String(scope[2])
        service = String(scope[3])
        signedHeaders = names
        self.signature = signature
    }

    /// Reads the `Authorization` header of a request.
    /// - Throws: `SigV4Error` `missingAuthentication` without one, `incompleteSignature` when it is
    ///   malformed.
    public init(request: SigV4Request) throws(SigV4Error) {
        guard let header = request.headers.first(name: "authorization") else { throw .missingAuthentication() }
        try self.init(header: header)
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
