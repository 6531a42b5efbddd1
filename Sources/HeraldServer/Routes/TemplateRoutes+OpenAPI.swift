import HTTPTypes
import HeraldAPI
import HeraldCore
import OpenAPIKit

extension TemplateRoutes {
    static let prefix = "/v1/templates"

    static let listOperation = APIOperation(
        .get, prefix, summary: "The app's templates (server key), each at its latest revision.",
        responses: [
            (
                200,
                .json(
                    "Every template (one page).",
                    .object(
                        requiring: ["data", "next_cursor"],
                        ["data": .array(items: .ref("Template")), "next_cursor": .nullableString()]))
            )
        ] + .errors(401, 403))

    static let saveOperation = APIOperation(
        .put, prefix + "/{name}",
        summary: "Create a template, or replace it with its next revision.",
        description: """
            Each source is Mustache, rendered as plain text (values are never HTML-escaped), with the send's \
            `template.variables` at the top level, `data` (the notification's data) and `recipient` (the \
            device's `user_id`, `locale`, `time_zone` and `attributes`). A strict template refuses a send \
            that gives no value for a variable it names, and fails a delivery whose recipient lacks one \
            (`template_variable_missing`). A notification keeps the revision it was accepted with. \
            docs/content.md, "Templates".
            """,
        body: .ref("TemplateContent"),
        responses: [
            (201, .json("Created: revision 1.", .ref("Template"))),
            (200, .json("Replaced: the next revision.", .ref("Template"))),
        ] + .errors(400, 401, 403, 404, 409, 413))

    static let readOperation = APIOperation(
        .get, prefix + "/{name}", summary: "One template, at its latest revision.",
        responses: [(200, .json("The template.", .ref("Template")))] + .errors(401, 403, 404))

    static let deleteOperation = APIOperation(
        .delete, prefix + "/{name}",
        summary: "Delete a template; notifications accepted with it keep their revision.",
        responses: [(204, .empty("Deleted."))] + .errors(401, 403, 404, 409))

    static let renderOperation = APIOperation(
        .post, prefix + "/{name}/render",
        summary: "Preview: render the template with sample values, as a send would for one recipient.",
        body: .object(
            closed: true,
            [
                "variables": .anyObject(description: "the send's template.variables"),
                "data": .anyObject(description: "the notification's payload.data"),
                "recipient": .object(
                    closed: true,
                    [
                        "user_id": .string(minLength: 1, maxLength: 255),
                        "locale": .string(minLength: 1, maxLength: 35),
                        "time_zone": .string(minLength: 1, maxLength: 64),
                        "attributes": .anyObject(),
                    ]),
                "locale": .string(
                    description: "the locale to render for (default: the recipient's)", minLength: 1, maxLength: 35),
            ]),
        responses: [
            (
                200,
                .json(
                    "What the template renders; `missing` names the variables without a value.",
                    .object(
                        requiring: [
                            "name", "revision", "strict", "localization", "title", "subtitle", "body", "data",
                            "missing",
                        ],
                        [
                            "name": .string, "revision": .integer, "strict": .boolean,
                            "localization": .nullableString(description: "the localization chosen (null: the default)"),
                            "title": .nullableString(), "subtitle": .nullableString(), "body": .nullableString(),
                            "data": .object(additionalProperties: .b(.string)),
                            "missing": .array(items: .string),
                        ]))
            )
        ] + .errors(400, 401, 403, 404, 413))

    /// The members of a template's definition.
    private static var contentMembers: [(String, JSONSchema)] {
        [
            ("description", .string(maxLength: 1000)),
            ("strict", .boolean(description: "a missing variable fails the send or delivery (default false)")),
            ("title", .string(minLength: 1, maxLength: 1000)),
            ("subtitle", .string(minLength: 1, maxLength: 1000)),
            ("body", .string(minLength: 1, maxLength: 4000)),
            (
                "data",
                .object(
                    description: "values of the notification's data, each a template",
                    maxProperties: TemplateContent.maxDataValues, properties: [:],
                    additionalProperties: .b(.string(maxLength: 4000)))
            ),
            ("localizations", APISchemas.localizations),
        ]
    }

    /// The schemas the operations name.
    static let schemas: OrderedDictionary<String, JSONSchema> = [
        "TemplateContent": .object(
            closed: true, description: "at least one of title, subtitle, body and data", members: contentMembers),
        "Template": .object(
            requiring: ["name", "revision", "configured", "strict", "created_at", "updated_at"],
            members: [
                ("name", .string), ("revision", .integer),
                ("configured", .boolean(description: "kept in the configuration: read-only here")),
            ] + contentMembers + [("created_at", .dateTime()), ("updated_at", .dateTime())]),
    ]
}
