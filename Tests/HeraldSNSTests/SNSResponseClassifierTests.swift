import HeraldCore
import HeraldSNS
import Testing

@Suite("SNSResponseClassifier: SNS answers to delivery outcomes")
struct SNSResponseClassifierTests {
    func service(_ code: String, status: Int = 400, message: String = "") -> SNSError {
        SNSError(code: .service, awsCode: code, type: "Sender", message: message, status: status)
    }

    @Test("A message id is delivered")
    func delivered() {
        #expect(SNSResponseClassifier.outcome(.success("m-1")) == .delivered(providerID: "m-1"))
    }

    @Test(
        "Each SNS error maps to one outcome",
        arguments: [
            (
                "EndpointDisabled", 400, "Endpoint is disabled",
                DeliveryOutcome.invalidToken(reason: "EndpointDisabled", since: nil)
            ),
            ("NotFound", 404, "Endpoint does not exist", .invalidToken(reason: "NotFound", since: nil)),
            (
                "InvalidParameter", 400,
                "Invalid parameter: Token Reason: iOS device tokens must be no more than 400 hex",
                .invalidToken(reason: "InvalidParameter", since: nil)
            ),
            (
                "InvalidParameter", 400,
                "Invalid parameter: TargetArn Reason: No endpoint found for the target arn specified",
                .invalidToken(reason: "InvalidParameter", since: nil)
            ),
            (
                "InvalidParameter", 400,
                "Invalid parameter: Token Reason: Endpoint arn:aws:sns:us-east-1:1:endpoint/GCM/a/b already exists with the same Token, but different attributes.",
                .rejected(reason: "InvalidParameter")
            ),
            ("InvalidParameter", 400, "Invalid parameter: Message too long", .rejected(reason: "InvalidParameter")),
            ("ParameterValueInvalid", 400, "bad", .rejected(reason: "ParameterValueInvalid")),
            ("Throttling", 400, "Rate exceeded", .retry(reason: "Throttling", after: nil)),
            ("ThrottlingException", 400, "Rate exceeded", .retry(reason: "ThrottlingException", after: nil)),
            ("Throttled", 429, "", .retry(reason: "Throttled", after: nil)),
            ("InternalError", 500, "", .retry(reason: "InternalError", after: nil)),
            ("SomethingNew", 503, "", .retry(reason: "SomethingNew", after: nil)),
            ("InvalidClientTokenId", 403, "", .configurationFailure(reason: "InvalidClientTokenId")),
            ("SignatureDoesNotMatch", 403, "", .configurationFailure(reason: "SignatureDoesNotMatch")),
            ("AuthorizationError", 403, "", .configurationFailure(reason: "AuthorizationError")),
            ("AccessDenied", 403, "", .configurationFailure(reason: "AccessDenied")),
            ("PlatformApplicationDisabled", 400, "", .configurationFailure(reason: "PlatformApplicationDisabled")),
            ("KMSAccessDenied", 400, "", .configurationFailure(reason: "KMSAccessDenied")),
            ("ValidationException", 400, "", .rejected(reason: "ValidationException")),
        ] as [(String, Int, String, DeliveryOutcome)])
    func table(code: String, status: Int, message: String, expected: DeliveryOutcome) {
        #expect(SNSResponseClassifier.outcome(for: service(code, status: status, message: message)) == expected)
        #expect(SNSResponseClassifier.outcome(.failure(service(code, status: status, message: message))) == expected)
    }

    @Test("Failures without an AWS code: no answer retries, 5xx pages retry, the client's own refusals do not")
    func withoutCode() {
        let unreachable = SNSError(code: .unreachable, message: "connect timeout")
        guard case .retry = SNSResponseClassifier.outcome(for: unreachable) else {
            Issue.record("unreachable should retry")
            return
        }
        #expect(
            SNSResponseClassifier.outcome(for: SNSError(code: .invalidResponse, message: "html", status: 502))
                == .retry(reason: "HTTP 502", after: nil))
        #expect(
            SNSResponseClassifier.outcome(for: SNSError(code: .invalidResponse, message: "html", status: 400))
                == .rejected(reason: "sns_invalid_response"))
        #expect(
            SNSResponseClassifier.outcome(for: SNSError(code: .messageTooLarge, message: "big"))
                == .rejected(reason: "payload_too_large"))
        #expect(
            SNSResponseClassifier.outcome(for: SNSError(code: .missingCredentials, message: "none"))
                == .configurationFailure(reason: "sns_missing_credentials"))
        #expect(
            SNSResponseClassifier.outcome(status: 503, awsCode: nil, message: nil)
                == .retry(reason: "HTTP 503", after: nil))
        #expect(SNSResponseClassifier.outcome(status: 400, awsCode: nil, message: nil) == .rejected(reason: "HTTP 400"))
    }
}
