import Foundation
import HTTPTypes
import HeraldAPI
import OpenAPIKit
import Yams

/// The OpenAPI 3.1 description of Herald's API, served at `/openapi.yaml`: built from the
/// ``APIOperation`` declarations the router registered and the named schemas of ``APISchemas`` and
/// of each dialect.
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
        // The native schemas (the webhooks' beside them), then each dialect's, in the order of their settings keys.
        var named = [APISchemas.native, WebhookRoutes.schemas, LiveActivityRoutes.schemas, TemplateRoutes.schemas]
        for dialect in HeraldApplication.dialects.sorted(by: { $0.settingsKey < $1.settingsKey }) {
            named.append(dialect.schemas)
        }
        for (name, schema) in named.joined() { schemas[OpenAPI.ComponentKey(rawValue: name)!] = schema }
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
            webhooks: WebhookEventsDocument.webhooks,
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

    /// The document as YAML, the same bytes in every process.
    ///
    /// OpenAPIKit keeps a security requirement (the schemes a request presents together) in a Swift
    /// dictionary, whose order follows each process's hash seed: the console's
    /// `cookieAuth` + `csrfToken` came out in either order. Those mappings are sorted by key.
    static func yaml(_ operations: [APIOperation]) -> String {
        guard let text = try? YAMLEncoder().encode(make(operations)) else { return "" }
        guard let node = try? Yams.compose(yaml: text),
            let sorted = try? Yams.serialize(node: sortingRequirements(node))
        else { return text }
        return sorted
    }

    /// `node` with the keys of every security requirement (each item of a `security` list) in order.
    private static func sortingRequirements(_ node: Node, inSecurity: Bool = false) -> Node {
        switch node {
        case .mapping(let mapping):
            var pairs = mapping.map { pair in
                (pair.key, sortingRequirements(pair.value, inSecurity: pair.key.string == "security"))
            }
            if inSecurity { pairs.sort { ($0.0.string ?? "") < ($1.0.string ?? "") } }
            return .mapping(Node.Mapping(pairs, mapping.tag, mapping.style, mapping.mark))
        case .sequence(let sequence):
            return .sequence(
                Node.Sequence(
                    sequence.map { sortingRequirements($0, inSecurity: inSecurity) }, sequence.tag, sequence.style,
                    sequence.mark))
        case .scalar, .alias:
            return node
        }
    }
}
