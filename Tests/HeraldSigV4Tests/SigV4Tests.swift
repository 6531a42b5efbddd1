import Crypto
import Foundation
import HeraldSigV4
import NIOHTTP1
import Testing

/// One case of AWS's SigV4 test suite (the 2015 suite: `AKIDEXAMPLE`, `20150830T123600Z`,
/// `us-east-1`, service `service`, host `example.amazonaws.com`), with the canonical request and
/// signature the suite states.
struct SigV4SuiteCase: Sendable, CustomTestStringConvertible {
    var name: String
    var method: String
    var path = "/"
    var query: [(name: String, value: String)] = []
    /// Headers besides `Host` and `X-Amz-Date`, in request order.
    var headers: [(String, String)] = []
    var body = ""
    var sessionToken: String?
    /// The suite's `.creq`, where it is checked here.
    var canonicalRequest: String?
    /// The suite's signature.
    var signature: String

    var testDescription: String { name }

    static let credentials = AWSCredentials(
        accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    static let date = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
    static let stsToken =
        "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuwthAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNVXAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA=="

    var request: SigV4Request {
        var fields = HTTPHeaders([("Host", "example.amazonaws.com")])
        for (name, value) in headers { fields.add(name: name, value: value) }
        return SigV4Request(method: method, path: path, query: query, headers: fields, body: Array(body.utf8))
    }

    static let all: [SigV4SuiteCase] = [
        SigV4SuiteCase(
            name: "get-vanilla", method: "GET",
            canonicalRequest: """
                GET
                /

                host:example.amazonaws.com
                x-amz-date:20150830T123600Z

                host;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            signature: "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
        SigV4SuiteCase(
            name: "get-vanilla-query-order-key-case", method: "GET",
            query: [("Param2", "value2"), ("Param1", "value1")],
            canonicalRequest: """
                GET
                /
                Param1=value1&Param2=value2
                host:example.amazonaws.com
                x-amz-date:20150830T123600Z

                host;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            signature: "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
        SigV4SuiteCase(
            name: "get-vanilla-empty-query-key", method: "GET", query: [("Param1", "value1")],
            signature: "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb"),
        SigV4SuiteCase(
            name: "get-vanilla-query-unreserved", method: "GET",
            query: [
                (
                    "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                    "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                )
            ],
            signature: "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"),
        SigV4SuiteCase(
            name: "get-vanilla-utf8-query", method: "GET", query: [("ሴ", "bar")],
            canonicalRequest: """
                GET
                /
                %E1%88%B4=bar
                host:example.amazonaws.com
                x-amz-date:20150830T123600Z

                host;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            signature: "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"),
        SigV4SuiteCase(
            name: "get-utf8", method: "GET", path: "/ሴ",
            canonicalRequest: """
                GET
                /%E1%88%B4

                host:example.amazonaws.com
                x-amz-date:20150830T123600Z

                host;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            signature: "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"),
        SigV4SuiteCase(
            name: "get-unreserved", method: "GET",
            path: "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            signature: "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"),
        SigV4SuiteCase(
            name: "get-space (normalized form)", method: "GET", path: "/example space/",
            signature: "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"),
        SigV4SuiteCase(
            name: "get-header-key-duplicate", method: "GET",
            headers: [("My-Header1", "value2"), ("My-Header1", "value2"), ("My-Header1", "value1")],
            canonicalRequest: """
                GET
                /

                host:example.amazonaws.com
                my-header1:value2,value2,value1
                x-amz-date:20150830T123600Z

                host;my-header1;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            signature: "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"),
        SigV4SuiteCase(
            name: "get-header-value-order", method: "GET",
            headers: [
                ("My-Header1", "value4"), ("My-Header1", "value1"), ("My-Header1", "value3"), ("My-Header1", "value2"),
            ],
            signature: "08c7e5a9acfcfeb3ab6b2185e75ce8b1deb5e634ec47601a50643f830c755c01"),
        SigV4SuiteCase(
            name: "get-header-value-trim", method: "GET",
            headers: [("My-Header1", " value1"), ("My-Header2", " \"a   b   c\"")],
            canonicalRequest: """
                GET
                /

                host:example.amazonaws.com
                my-header1:value1
                my-header2:"a b c"
                x-amz-date:20150830T123600Z

                host;my-header1;my-header2;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            signature: "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"),
        SigV4SuiteCase(
            name: "post-vanilla", method: "POST",
            signature: "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
        SigV4SuiteCase(
            name: "post-vanilla-query", method: "POST", query: [("Param1", "value1")],
            signature: "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"),
        SigV4SuiteCase(
            name: "post-vanilla-query-nonunreserved", method: "POST",
            query: [("@#$%^", ""), ("+", "/,?><`\";:\\|][{}")],
            signature: "66c82657c86e26fb25238d0e69f011edc4c6df5ae71119d7cb98ed9b87393c1e"),
        SigV4SuiteCase(
            name: "post-header-key-sort", method: "POST", headers: [("My-Header1", "value1")],
            canonicalRequest: """
                POST
                /

                host:example.amazonaws.com
                my-header1:value1
                x-amz-date:20150830T123600Z

                host;my-header1;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """,
            signature: "c5410059b04c1ee005303aed430f6e6645f61f4dc9e1461ec8f8916fdf18852c"),
        SigV4SuiteCase(
            name: "post-header-value-case", method: "POST", headers: [("My-Header1", "VALUE1")],
            signature: "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"),
        SigV4SuiteCase(
            name: "post-x-www-form-urlencoded", method: "POST",
            headers: [("Content-Type", "application/x-www-form-urlencoded")], body: "Param1=value1",
            canonicalRequest: """
                POST
                /

                content-type:application/x-www-form-urlencoded
                host:example.amazonaws.com
                x-amz-date:20150830T123600Z

                content-type;host;x-amz-date
                9095672bbd1f56dfc5b65f3e153adc8731a4a654192329106275f4c7b24d0b6e
                """,
            signature: "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"),
        SigV4SuiteCase(
            name: "post-x-www-form-urlencoded-parameters", method: "POST",
            headers: [("Content-Type", "application/x-www-form-urlencoded; charset=utf8")], body: "Param1=value1",
            signature: "1a72ec8f64bd914b0e42e42607c7fbce7fb2c7465f63e3092b3b0d39fa77a6fe"),
        SigV4SuiteCase(
            name: "post-sts-header-before", method: "POST", sessionToken: stsToken,
            signature: "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"),
    ]
}

@Suite("SigV4: AWS's test suite and the documented IAM example")
struct SigV4Tests {
    @Test("Each suite case signs as AWS states", arguments: SigV4SuiteCase.all)
    func suiteCase(_ suite: SigV4SuiteCase) {
        var credentials = SigV4SuiteCase.credentials
        credentials.sessionToken = suite.sessionToken
        let signer = SigV4(credentials: credentials, region: "us-east-1", service: "service")
        var request = suite.request
        let signed = signer.sign(&request, date: SigV4SuiteCase.date)
        if let expected = suite.canonicalRequest { #expect(signed.canonicalRequest == expected) }
        #expect(signed.signature == suite.signature)
        #expect(
            signed.authorization
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
                + "SignedHeaders=\(signed.signedHeaders), Signature=\(suite.signature)")
        #expect(request.headers.first(name: "Authorization") == signed.authorization)
        #expect(request.headers.first(name: "X-Amz-Date") == "20150830T123600Z")
        #expect(request.headers.first(name: "X-Amz-Security-Token") == suite.sessionToken)
    }

    @Test("The suite's string to sign for get-vanilla-query-order-key-case")
    func stringToSign() {
        let canonical = SigV4SuiteCase.all[1].canonicalRequest ?? ""
        #expect(
            SigV4.stringToSign(
                amzDate: "20150830T123600Z", scope: "20150830/us-east-1/service/aws4_request",
                canonicalRequest: canonical)
                    == """
                    AWS4-HMAC-SHA256
                    20150830T123600Z
                    20150830/us-east-1/service/aws4_request
                    816cd5b414d056048ba4f7c5386d6e0533120fb1fcfa93762cf0fc39e2cf19e0
                    """)
    }

    @Test("The IAM user guide's example: ListUsers, its signing key and signature")
    func iamExample() {
        let key = SigV4.signingKey(
            secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", date: "20150830", region: "us-east-1",
            service: "iam")
        #expect(
            key.withUnsafeBytes { Array($0) }
                == Array(hex: "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"))
        var request = SigV4Request(
            method: "GET", query: [("Action", "ListUsers"), ("Version", "2010-05-08")],
            headers: [
                "Host": "iam.amazonaws.com", "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
            ])
        let signer = SigV4(credentials: SigV4SuiteCase.credentials, region: "us-east-1", service: "iam")
        let signed = signer.sign(&request, date: SigV4SuiteCase.date)
        #expect(
            SigV4.hexSHA256(Array(signed.canonicalRequest.utf8))
                == "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59")
        #expect(
            signed.authorization
                == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
                + "SignedHeaders=content-type;host;x-amz-date, "
                + "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")
    }

    @Test("Re-signing replaces the date and the Authorization header rather than adding to them")
    func resign() {
        let signer = SigV4(credentials: SigV4SuiteCase.credentials, region: "us-east-1", service: "service")
        var request = SigV4SuiteCase.all[0].request
        signer.sign(&request, date: SigV4SuiteCase.date.addingTimeInterval(-3600))
        let signed = signer.sign(&request, date: SigV4SuiteCase.date)
        #expect(request.headers["authorization"].count == 1)
        #expect(request.headers["x-amz-date"] == ["20150830T123600Z"])
        #expect(signed.signature == SigV4SuiteCase.all[0].signature)
    }

    @Test("URI encoding: unreserved bytes kept, everything else %XX in upper case, slashes only in paths")
    func uriEncoding() {
        #expect(SigV4.uriEncode("a b+c/d=é~") == "a%20b%2Bc%2Fd%3D%C3%A9~")
        #expect(SigV4.uriEncode("/a b/c", keepingSlash: true) == "/a%20b/c")
        #expect(SigV4.canonicalQuery([("b", "2"), ("B", "1"), ("a", "z"), ("a", "y")]) == "B=1&a=y&a=z&b=2")
        #expect(SigV4.canonicalURI("") == "/")
    }

    @Test("X-Amz-Date is yyyyMMdd'T'HHmmss'Z' in UTC, and reads back")
    func amzDate() {
        #expect(SigV4.amzDate(SigV4SuiteCase.date) == "20150830T123600Z")
        #expect(SigV4.date(amzDate: "20150830T123600Z") == SigV4SuiteCase.date)
        #expect(SigV4.date(amzDate: "2015-08-30T12:36:00Z") == nil)
        #expect(SigV4.date(amzDate: "20151330T123600Z") == nil)
    }

    @Test("Credentials come from the AWS_* variables, and never print their secret")
    func credentials() throws {
        let environment = [
            "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret-value", "AWS_SESSION_TOKEN": "tok",
        ]
        let credentials = try #require(AWSCredentials(environment: environment))
        #expect(
            credentials
                == AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret-value", sessionToken: "tok"))
        #expect(!"\(credentials)".contains("secret-value"))
        #expect(!"\(credentials)".contains("tok)"))
        #expect(AWSCredentials(environment: ["AWS_ACCESS_KEY_ID": "AKIDEXAMPLE"]) == nil)
        #expect(
            AWSCredentials(environment: ["AWS_ACCESS_KEY_ID": "A", "AWS_SECRET_ACCESS_KEY": "s"])?.sessionToken == nil)
    }
}

extension Array where Element == UInt8 {
    /// Bytes from hex text (test fixtures).
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self = bytes
    }
}
