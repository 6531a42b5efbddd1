import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension SNSAPIRoutes {
    package static let operation = APIOperation(
        .post, prefix, tags: ["SNS"],
        summary: "SNS-compatible API: the mobile-push subset of AWS SNS's Query API (2010-03-31).",
        description: """
            Point an AWS SDK's endpoint URL here (http://<host>/sns). The body is the Query API's form \
            (Action, Version and the action's parameters, maps as Name.entry.N.key/value); requests are SigV4 \
            signed (service sns, the app's region) with app.<id>.sns_api.access_key_id, which selects the app. \
            Answers are SNS's XML (<ActionResponse><ActionResult>…</ActionResult><ResponseMetadata>), errors \
            SNS's <ErrorResponse> with its codes: InvalidParameter, InvalidAction, EndpointDisabled (400), \
            AuthorizationError, SignatureDoesNotMatch, InvalidClientTokenId, MissingAuthenticationToken (403), \
            NotFound (404). Endpoints are installations (their id is the installation id), topics are channels, \
            Publish is a notification whose id is the MessageId.
            """,
        security: .sigV4,
        body: .object(
            requiring: ["Action"],
            description: "Further parameters as the action takes them (Name, Platform, Attributes.entry.N.key…).",
            [
                "Action": .string(allowedValues: Action.allCases.map { AnyCodable($0.rawValue) }),
                "Version": .string(allowedValues: [AnyCodable(version)]),
            ]),
        bodyEncoding: .form,
        responses: [
            (200, .xml("The action's <ActionResponse> in SNS's namespace.", .string)),
            (400, .xml("SNS's <ErrorResponse>: InvalidParameter, InvalidAction, EndpointDisabled.", .string)),
            (
                403,
                .xml(
                    "SNS's <ErrorResponse>: SignatureDoesNotMatch, InvalidClientTokenId, MissingAuthenticationToken.",
                    .string)
            ),
            (404, .xml("SNS's <ErrorResponse>: NotFound.", .string)),
            (413, .xml("SNS's <ErrorResponse>: RequestEntityTooLarge.", .string)),
            (
                429,
                .xml(
                    "SNS's <ErrorResponse>: Throttled (too many refused signatures from this address: "
                        + "http.auth_failures_per_minute), with Retry-After.", .string)
            ),
            (500, .xml("SNS's <ErrorResponse>: InternalError.", .string)),
            (503, .xml("SNS's <ErrorResponse>: ServiceUnavailable (the database cannot be written).", .string)),
        ])
}
