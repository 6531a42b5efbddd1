import Foundation
import HeraldCore
import HeraldSigV4
import NIOCore
import NIOHTTP1
import Testing

@testable import HeraldSNS

@Suite("SNS client without a server: form bodies, XML answers, signed requests, configuration")
struct SNSQueryTests {
    @Test("Bodies are form-encoded as the AWS SDKs encode them: Action and Version first, spaces as +, + as %2B")
    func body() {
        let body = SNSQuery.body(
            action: "Publish", parameters: [("Message", #"{"default":"a b+c"}"#), ("MessageStructure", "json")])
        #expect(
            body
                == "Action=Publish&Version=2010-03-31&Message=%7B%22default%22%3A%22a+b%2Bc%22%7D&MessageStructure=json"
        )
    }

    @Test("Maps flatten to entry.N.key/value in key order; message attributes to Name/Value.DataType/StringValue")
    func entries() {
        let map = SNSQuery.mapEntries("Attributes", ["Token": "t", "Enabled": "true"])
        #expect(
            map.map { "\($0.0)=\($0.1)" } == [
                "Attributes.entry.1.key=Enabled", "Attributes.entry.1.value=true", "Attributes.entry.2.key=Token",
                "Attributes.entry.2.value=t",
            ])
        let attributes = SNSQuery.messageAttributeEntries([.timeToLive(seconds: 30, for: .gcm)])
        #expect(
            attributes.map { "\($0.0)=\($0.1)" } == [
                "MessageAttributes.entry.1.Name=AWS.SNS.MOBILE.FCM.TTL",
                "MessageAttributes.entry.1.Value.DataType=String",
                "MessageAttributes.entry.1.Value.StringValue=30",
            ])
    }

    @Test("A result is read from <ActionResponse><ActionResult> in SNS's namespace")
    func result() throws {
        let xml = """
            <PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">
              <PublishResult><MessageId>567910cd-659e-55d4-8ccb-5aaf14679dc0</MessageId></PublishResult>
              <ResponseMetadata><RequestId>d74b8436-ae13-5ab4-a9ff-ce54dfea72a0</RequestId></ResponseMetadata>
            </PublishResponse>
            """
        let result = try SNSQuery.result(action: "Publish", status: 200, body: Array(xml.utf8)).get()
        #expect(result?.text(of: "MessageId") == "567910cd-659e-55d4-8ccb-5aaf14679dc0")
        let attributes = """
            <GetEndpointAttributesResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">
              <GetEndpointAttributesResult><Attributes>
                <entry><key>Enabled</key><value>true</value></entry>
                <entry><key>CustomUserData</key><value>user &amp; data</value></entry>
                <entry><key>Token</key><value>APA91bGi</value></entry>
              </Attributes></GetEndpointAttributesResult>
            </GetEndpointAttributesResponse>
            """
        let read = try SNSQuery.result(action: "GetEndpointAttributes", status: 200, body: Array(attributes.utf8)).get()
        #expect(
            SNSQuery.attributes(in: read) == ["Enabled": "true", "CustomUserData": "user & data", "Token": "APA91bGi"])
        let empty = "<DeleteEndpointResponse xmlns=\"http://sns.amazonaws.com/doc/2010-03-31/\"/>"
        #expect(try SNSQuery.result(action: "DeleteEndpoint", status: 200, body: Array(empty.utf8)).get() == nil)
    }

    @Test("Error responses keep AWS's type, code, message and request id verbatim")
    func errorResponse() {
        let xml = """
            <ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/">
              <Error><Type>Sender</Type><Code>InvalidParameter</Code>
                <Message>Invalid parameter: Token Reason: Endpoint arn:aws:sns:us-east-1:123456789012:endpoint/APNS/app/\
            5e3e9847-3183-3f18-a7e8-671c3a57d4b3 already exists with the same Token, but different attributes.</Message>
              </Error>
              <RequestId>9dd01905-5012-5f99-8663-4b3ecd0dfaef</RequestId>
            </ErrorResponse>
            """
        guard
            case .failure(let error) = SNSQuery.result(
                action: "CreatePlatformEndpoint", status: 400, body: Array(xml.utf8))
        else {
            Issue.record("not an error")
            return
        }
        #expect(error.code == .service)
        #expect(error.awsCode == "InvalidParameter")
        #expect(error.type == "Sender")
        #expect(error.status == 400)
        #expect(error.requestID == "9dd01905-5012-5f99-8663-4b3ecd0dfaef")
        #expect(
            error.existingEndpointARN
                == "arn:aws:sns:us-east-1:123456789012:endpoint/APNS/app/5e3e9847-3183-3f18-a7e8-671c3a57d4b3")

        guard case .failure(let page) = SNSQuery.result(action: "Publish", status: 502, body: Array("<html>".utf8))
        else {
            Issue.record("not an error")
            return
        }
        #expect(page.code == .invalidResponse)
        #expect(page.status == 502)
        guard case .failure(let wrong) = SNSQuery.result(action: "Publish", status: 200, body: Array("{}".utf8)) else {
            Issue.record("not an error")
            return
        }
        #expect(wrong.code == .invalidResponse)
    }

    @Test("The existing endpoint's ARN is found only in the duplicate-token message")
    func existingARN() {
        #expect(
            SNSError.existingEndpointARN(
                inMessage: "Invalid parameter: Token Reason: Endpoint arn:aws-cn:sns:cn-north-1:1:endpoint/GCM/a/b "
                    + "already exists with the same token, but different attributes.")
                == "arn:aws-cn:sns:cn-north-1:1:endpoint/GCM/a/b")
        #expect(SNSError.existingEndpointARN(inMessage: "Invalid parameter: Token Reason: too long") == nil)
        #expect(SNSError.existingEndpointARN(inMessage: "Endpoint arn:aws:sns:x does not exist") == nil)
        let other = SNSError(
            code: .service, awsCode: "NotFound", message: "Endpoint arn:a already exists with the same Token")
        #expect(other.existingEndpointARN == nil)
    }

    @Test("The client signs for sns in its region, with host, content type and date; the verifier accepts it")
    func signedRequest() throws {
        let now = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z
        let client = try SNSClient(
            configuration: .init(
                region: "eu-west-1",
                credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "secret", sessionToken: "tok"),
                endpoint: "http://127.0.0.1:4566"),
            now: { now })
        let request = client.request(action: "DeleteEndpoint", parameters: [("EndpointArn", "arn:x")])
        #expect(request.method == "POST")
        #expect(request.path == "/")
        #expect(request.headers.first(name: "host") == "127.0.0.1:4566")
        #expect(request.headers.first(name: "content-type") == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(request.headers.first(name: "x-amz-security-token") == "tok")
        #expect(
            String(decoding: request.body, as: UTF8.self)
                == "Action=DeleteEndpoint&Version=2010-03-31&EndpointArn=arn%3Ax")
        let authorization = try SigV4Verifier(service: "sns", region: "eu-west-1", now: { now })
            .verify(request, secretAccessKey: "secret")
        #expect(authorization.signedHeaders == ["content-type", "host", "x-amz-date", "x-amz-security-token"])
    }

    @Test("Endpoints default to the region's, credentials to the environment")
    func configuration() throws {
        #expect(SNSClient.Configuration(region: "us-east-1").endpointURL == "https://sns.us-east-1.amazonaws.com")
        #expect(SNSClient.Configuration(region: "cn-north-1").endpointURL == "https://sns.cn-north-1.amazonaws.com.cn")
        let missing = #expect(throws: SNSError.self) {
            try SNSClient(configuration: .init(region: "us-east-1"), environment: [:])
        }
        #expect(missing?.code == .missingCredentials)
        let badURL = #expect(throws: SNSError.self) {
            try SNSClient(
                configuration: .init(region: "us-east-1", endpoint: "ftp://example.com"),
                environment: ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"])
        }
        #expect(badURL?.code == .invalidEndpointURL)
        let client = try SNSClient(
            configuration: .init(region: "us-east-1", endpoint: "https://sns.us-east-1.amazonaws.com:443"),
            environment: ["AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"])
        #expect(
            client.request(action: "Publish", parameters: []).headers.first(name: "host")
                == "sns.us-east-1.amazonaws.com")
    }

    @Test("A server that is not there is unreachable: a retry")
    func unreachable() async throws {
        let closed = try SNSClient(
            configuration: .init(
                region: "us-east-1", credentials: AWSCredentials(accessKeyID: "AKIDEXAMPLE", secretAccessKey: "x"),
                endpoint: "http://127.0.0.1:1", requestTimeout: .seconds(2)))
        let error = await #expect(throws: SNSError.self) { try await closed.deleteEndpoint(endpointARN: "arn:x") }
        #expect(error?.code == .unreachable)
        guard let error, case .retry = SNSResponseClassifier.outcome(for: error) else {
            Issue.record("not a retry")
            return
        }
    }
}
