import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import Hummingbird
import Logging

/// The app's templates: `/v1/templates` (server key only; docs/content.md, "Templates"). Each save
/// is the template's next revision; a template from the configuration is read here and changed only
/// there.
struct TemplateRoutes: Sendable {
    let store: any TemplateStore
    let maxBodyBytes: Int
    let now: @Sendable () -> Date

    func register(on group: RouterGroup<HeraldRequestContext>, prefix: String, table: inout RouteTable) {
        table.on(group, prefix: prefix, Self.listOperation, use: list)
        table.on(group, prefix: prefix, Self.saveOperation, use: save)
        table.on(group, prefix: prefix, Self.readOperation, use: read)
        table.on(group, prefix: prefix, Self.deleteOperation, use: delete)
        table.on(group, prefix: prefix, Self.renderOperation, use: render)
    }

    @Sendable func list(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        return .json(ListQuery.page(try await store.templates(appID: appID).map(TemplateView.json), next: nil))
    }

    /// Creates the template, or replaces it with its next revision.
    @Sendable func save(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let appID = try Self.server(context)
        let name = try Self.name(context)
        let content = try TemplateContent(parsing: try await request.jsonBody(limit: maxBodyBytes))
        if let existing = try await store.template(appID: appID, name: name), existing.configured {
            throw Self.configured(existing)
        }
        let now = now()
        let saved = try await store.saveTemplate(
            NotificationTemplate(appID: appID, name: name, content: content, createdAt: now, updatedAt: now))
        context.logger.info(
            "template saved",
            metadata: ["herald.app": "\(appID)", "herald.template": "\(name)", "herald.revision": "\(saved.revision)"])
        return .json(TemplateView.json(saved), status: saved.revision == 1 ? .created : .ok)
    }

    @Sendable func read(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        .json(TemplateView.json(try await template(context)))
    }

    @Sendable func delete(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let template = try await template(context)
        guard !template.configured else { throw Self.configured(template) }
        guard try await store.deleteTemplate(appID: template.appID, name: template.name) else {
            throw HeraldError.notFound("Template")
        }
        context.logger.info(
            "template deleted", metadata: ["herald.app": "\(template.appID)", "herald.template": "\(template.name)"])
        return Response(status: .noContent)
    }

    /// Renders the template with sample values, as a send would for one recipient; nothing is sent.
    @Sendable func render(_ request: Request, context: HeraldRequestContext) async throws -> Response {
        let template = try await template(context)
        let sample = try TemplateSample(parsing: try await request.jsonBody(limit: maxBodyBytes))
        return .json(try sample.preview(template))
    }

    private func template(_ context: HeraldRequestContext) async throws -> NotificationTemplate {
        let appID = try Self.server(context)
        guard let template = try await store.template(appID: appID, name: try Self.name(context)) else {
            throw HeraldError.notFound("Template")
        }
        return template
    }

    private static func name(_ context: HeraldRequestContext) throws(HeraldError) -> String {
        guard let name = context.parameters.get("name"), NotificationTemplate.isName(name) else {
            throw .notFound("Template")
        }
        return name
    }

    private static func configured(_ template: NotificationTemplate) -> HeraldError {
        HeraldError(
            kind: .conflict, code: "template_configured",
            message:
                "Template \(template.name) comes from the configuration (app.\(template.appID).templates): change it there."
        )
    }

    static func server(_ context: HeraldRequestContext) throws(HeraldError) -> String {
        try context.requireServerKey("Templates take the app's server key.")
    }
}

/// The sample values of a preview (`POST /v1/templates/{name}/render`): the send's variables and
/// data, a recipient's profile and the locale to render for.
struct TemplateSample {
    var variables: [String: JSONValue]
    var data: [String: JSONValue]
    var recipient: TemplateRecipient
    var locale: String?

    init(parsing value: JSONValue) throws(HeraldError) {
        let reader = try JSONObjectReader(value)
        try reader.rejectUnknown(allowed: ["variables", "data", "recipient", "locale"])
        variables = try reader.object("variables")?.members ?? [:]
        data = try reader.object("data")?.members ?? [:]
        recipient = TemplateRecipient()
        if let profile = try reader.object("recipient") {
            try profile.rejectUnknown(allowed: ["user_id", "locale", "time_zone", "attributes"])
            recipient = TemplateRecipient(
                userID: try profile.string("user_id", maxLength: 255),
                locale: try profile.string("locale", maxLength: 35),
                timezone: try profile.string("time_zone", maxLength: 64),
                attributes: try profile.object("attributes")?.members ?? [:])
        }
        locale = try reader.string("locale", maxLength: 35) ?? recipient.locale
    }

    /// What the template renders with these values: the language chosen, the words and data, and the
    /// variables missing (which fail a strict template's send or delivery).
    /// - Throws: `invalid_template` for a stored template Mustache cannot parse (none is stored so).
    func preview(_ template: NotificationTemplate) throws(HeraldError) -> JSONValue {
        let compiled = try CompiledTemplate(template.content)
        let key = LocaleMatcher(keys: compiled.localizationKeys).match(locale)
        let rendering = compiled.render(key: key, variables: variables, data: data, recipient: recipient)
        return .object([
            "name": .string(template.name), "revision": .number(JSONNumber(template.revision)),
            "strict": .bool(template.content.strict), "localization": key.map(JSONValue.string) ?? .null,
            "title": InstallationView.string(rendering.title), "subtitle": InstallationView.string(rendering.subtitle),
            "body": InstallationView.string(rendering.body),
            "data": .object(rendering.data.mapValues(JSONValue.string)),
            "missing": .array(rendering.missing.map(JSONValue.string)),
        ])
    }
}

/// The API's view of a template.
enum TemplateView {
    static func json(_ template: NotificationTemplate) -> JSONValue {
        guard case .object(var view) = template.content.json else { return .null }
        view["name"] = .string(template.name)
        view["revision"] = .number(JSONNumber(template.revision))
        view["configured"] = .bool(template.configured)
        view["description"] = view["description"] ?? .null
        view["created_at"] = InstallationView.timestamp(template.createdAt)
        view["updated_at"] = InstallationView.timestamp(template.updatedAt)
        return .object(view)
    }
}
