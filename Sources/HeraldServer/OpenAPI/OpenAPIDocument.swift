import Foundation
import HTTPTypes
import OpenAPIKit
import Yams

/// The OpenAPI 3.1 description of Herald's API, served at `/openapi.yaml`: built from the
/// ``APIOperation`` declarations the router registered and the named schemas of ``APISchemas``.
enum OpenAPIDocument {
    /// The document of these operations.
    static func make(_ operations: [APIOperation]) -> OpenAPI.Document {
        var paths: OpenAPI.PathItem.Map = [:]
        for operation in operations {
            let path = OpenAPI.Path(rawValue: operation.path)
            var item = paths[path]?.pathItemValue ?? OpenAPI.PathItem()
            item[OpenAPI.HttpMethod(rawValue: operation.method.rawValue)!] = operation.operation
            paths[path] = .b(item)
        }
        var schemas: OrderedDictionary<OpenAPI.ComponentKey, JSONSchema> = [:]
        for (name, schema) in APISchemas.all { schemas[OpenAPI.ComponentKey(rawValue: name)!] = schema }
        return OpenAPI.Document(
            openAPIVersion: .v3_1_1,
            info: .init(
                title: "Herald",
                description: """
                    Self-hosted unified push notification gateway. Native API: JSON, snake_case. Errors have \
                    one shape: {"error": {"code", "message", "field"}}; dialects (AOVIS, ArgusAI, SNS) keep their own.
                    """,
                version: "0.1.0"),
            servers: [.init(url: URL(string: "http://127.0.0.1:8080")!)],
            paths: paths,
            components: OpenAPI.Components(
                schemas: schemas,
                responses: [
                    "Error": .b(OpenAPI.Response(description: "An error.", content: .json(.ref("Error"))))
                ],
                securitySchemes: [
                    "bearer": .b(
                        .http(
                            scheme: "bearer",
                            description: """
                                The app's server key (full access), client key (register, update, delete \
                                installations) or a user token from the app's own auth system (own installations \
                                only). With several apps, X-Herald-App names the app a user token belongs to.
                                """)),
                    "cookieAuth": .b(
                        .apiKey(
                            name: "herald_console", location: .cookie,
                            description: """
                                The web console's session (POST /console/session with a server key sets it); acts                                 as the app's server key when X-CSRF-Token carries the session's CSRF token.
                                """)),
                    "csrfToken": .b(
                        .apiKey(
                            name: "X-CSRF-Token", location: .header,
                            description: "The CSRF token of the console session (from POST or GET /console/session).")),
                    "sigv4": .b(
                        .apiKey(
                            name: "Authorization", location: .header,
                            description: """
                                AWS Signature Version 4 (service sns), signed with an app's \
                                app.<id>.sns_api.access_key_id and secret_access_key, as AWS SDKs sign.
                                """)),
                ]),
            security: [
                [.component(named: "bearer"): []],
                [.component(named: "cookieAuth"): [], .component(named: "csrfToken"): []],
            ])
    }

    /// The document as YAML.
    static func yaml(_ operations: [APIOperation]) -> String {
        (try? YAMLEncoder().encode(make(operations))) ?? ""
    }
}
