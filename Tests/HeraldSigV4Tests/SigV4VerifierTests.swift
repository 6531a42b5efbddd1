import Foundation
import HeraldSigV4
import NIOHTTP1
import Testing

@Suite("SigV4Verifier: recomputing a signature on the server side")
struct SigV4VerifierTests {
    static let secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    static let signedAt = SigV4SuiteCase.date

    /// A verifier whose clock reads `signedAt` plus an offset.
    func verifier(offset: TimeInterval = 0, service: String? = "sns") -> SigV4Verifier {
        let now = Self.signedAt.addingTimeInterval(offset)
        return SigV4Verifier(service: service, now: { now })
    }

    /// A Publish as an SNS client sends it, signed.
    func signedPublish(body: String = "Action=Publish&Version=2010-03-31&Message=hello") -> SigV4Request {
        var request = SigV4Request(
            method: "POST", path: "/",
            headers: [
                "Host": "sns.us-east-1.amazonaws.com",
                "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
            ],
            body: Array(body.utf8))
        SigV4(credentials: SigV4SuiteCase.credentials, region: "us-east-1", service: "sns")
            .sign(&request, date: Self.signedAt)
        return request
    }

    @Test("A correctly signed request is accepted, naming its access key and scope")
    func accepted() throws {
        let authorization = try verifier().verify(signedPublish(), secretAccessKey: Self.secret)
        #expect(authorization.accessKeyID == "AKIDEXAMPLE")
        #expect(authorization.scope == "20150830/us-east-1/sns/aws4_request")
        #expect(authorization.signedHeaders == ["content-type", "host", "x-amz-date"])
    }

    @Test("The suite's own requests verify as received on the wire (path and query percent-encoded)")
    func suiteRequestsVerify() throws {
        for suite in SigV4SuiteCase.all where suite.sessionToken == nil {
            var signed = suite.request
            SigV4(credentials: SigV4SuiteCase.credentials, region: "us-east-1", service: "service")
                .sign(&signed, date: Self.signedAt)
            var target = SigV4.canonicalURI(signed.path)
            if !signed.query.isEmpty {
                target +=
                    "?"
                    + signed.query.map { "\(SigV4.uriEncode($0.name))=\(SigV4.uriEncode($0.value))" }
                    .joined(separator: "&")
            }
            let received = SigV4Request(
                method: suite.method, target: target, headers: signed.headers, body: signed.body)
            #expect(throws: Never.self, "\(suite.name)") {
                try verifier(service: "service").verify(received, secretAccessKey: Self.secret)
            }
        }
    }

    @Test("A request signed by botocore (the AWS SDK for Python) verifies")
    func sdkRequest() throws {
        // botocore 1.x SigV4Auth for sns/us-east-1, AKIDEXAMPLE, at 2026-11-25T04:43:16Z.
        let body =
            "Action=Publish&Version=2010-03-31&TargetArn=arn%3Aaws%3Asns%3Aus-east-1%3A123456789012%3Aendpoint%2FGCM"
            + "%2Fapp%2Fabc&Message=%7B%22default%22%3A%22hi%22%7D&MessageStructure=json"
        let request = SigV4Request(
            method: "POST", target: "/",
            headers: [
                "Host": "sns.us-east-1.amazonaws.com",
                "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
                "X-Amz-Date": "20261125T044316Z",
                "Authorization":
                    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261125/us-east-1/sns/aws4_request, "
                    + "SignedHeaders=content-type;host;x-amz-date, "
                    + "Signature=cbd3bde8ab3312260eca22319bacc393da1e04f3c8e7c3485fa9a62dd535d2fe",
            ],
            body: Array(body.utf8))
        let now = try #require(SigV4.date(amzDate: "20261125T044500Z"))
        try SigV4Verifier(service: "sns", region: "us-east-1", now: { now }).verify(
            request, secretAccessKey: Self.secret)
    }

    @Test("A wrong secret is refused with AWS's SignatureDoesNotMatch")
    func wrongSecret() {
        let error = #expect(throws: SigV4Error.self) {
            try verifier().verify(signedPublish(), secretAccessKey: "not-the-secret")
        }
        #expect(error?.code == .signatureDoesNotMatch)
        #expect(error?.awsCode == "SignatureDoesNotMatch")
        #expect(error?.status == 403)
    }

    @Test("An altered body, signed header, method or query is refused")
    func altered() {
        var body = signedPublish()
        body.body = Array("Action=Publish&Version=2010-03-31&Message=hellO".utf8)
        var header = signedPublish()
        header.headers.replaceOrAdd(name: "Content-Type", value: "text/plain")
        var method = signedPublish()
        method.method = "PUT"
        var query = signedPublish()
        query.query = [("Action", "DeleteEndpoint")]
        for request in [body, header, method, query] {
            let error = #expect(throws: SigV4Error.self) {
                try verifier().verify(request, secretAccessKey: Self.secret)
            }
            #expect(error?.code == .signatureDoesNotMatch)
        }
    }

    @Test("X-Amz-Date may be 15 minutes off either way, not more")
    func skew() {
        for offset in [-900.0, -60, 0, 899, 900] {
            #expect(throws: Never.self, "offset \(offset)") {
                try verifier(offset: offset).verify(signedPublish(), secretAccessKey: Self.secret)
            }
        }
        for offset in [-901.0, 901, 3600] {
            let error = #expect(throws: SigV4Error.self, "offset \(offset)") {
                try verifier(offset: offset).verify(signedPublish(), secretAccessKey: Self.secret)
            }
            #expect(error?.code == .signatureExpired)
            #expect(error?.awsCode == "SignatureDoesNotMatch")
        }
    }

    @Test("Missing, malformed or foreign authorization is named")
    func malformed() async {
        var missing = signedPublish()
        missing.headers.remove(name: "authorization")
        let unauthenticated = #expect(throws: SigV4Error.self) {
            try verifier().verify(missing, secretAccessKey: Self.secret)
        }
        #expect(unauthenticated?.code == .missingAuthentication)
        #expect(unauthenticated?.awsCode == "MissingAuthenticationToken")

        var garbled = signedPublish()
        garbled.headers.replaceOrAdd(name: "authorization", value: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE")
        let incomplete = #expect(throws: SigV4Error.self) {
            try verifier().verify(garbled, secretAccessKey: Self.secret)
        }
        #expect(incomplete?.awsCode == "IncompleteSignature")

        var undated = signedPublish()
        undated.headers.remove(name: "x-amz-date")
        let noDate = #expect(throws: SigV4Error.self) { try verifier().verify(undated, secretAccessKey: Self.secret) }
        #expect(noDate?.code == .incompleteSignature)

        var sqs = SigV4Request(method: "POST", headers: ["Host": "sqs.us-east-1.amazonaws.com"])
        SigV4(credentials: SigV4SuiteCase.credentials, region: "us-east-1", service: "sqs")
            .sign(&sqs, date: Self.signedAt)
        let otherService = #expect(throws: SigV4Error.self) { try verifier().verify(sqs, secretAccessKey: Self.secret) }
        #expect(otherService?.code == .signatureDoesNotMatch)

        let unknown = await #expect(throws: SigV4Error.self) {
            try await verifier().verify(signedPublish()) { _ in nil }
        }
        #expect(unknown?.awsCode == "InvalidClientTokenId")
        let known = try? await verifier().verify(signedPublish()) { $0 == "AKIDEXAMPLE" ? Self.secret : nil }
        #expect(known?.accessKeyID == "AKIDEXAMPLE")
    }

    @Test("Every signed header must be in the request, and Host must be signed")
    func signedHeadersPresent() {
        var dropped = signedPublish()
        dropped.headers.remove(name: "content-type")
        let error = #expect(throws: SigV4Error.self) { try verifier().verify(dropped, secretAccessKey: Self.secret) }
        #expect(error?.code == .incompleteSignature)

        var hostless = SigV4Request(method: "POST", headers: ["X-Custom": "1"])
        SigV4(credentials: SigV4SuiteCase.credentials, region: "us-east-1", service: "sns")
            .sign(&hostless, date: Self.signedAt)
        let unsignedHost = #expect(throws: SigV4Error.self) {
            try verifier().verify(hostless, secretAccessKey: Self.secret)
        }
        #expect(unsignedHost?.code == .incompleteSignature)
    }
}
