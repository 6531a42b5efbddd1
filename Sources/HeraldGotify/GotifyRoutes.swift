import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging
import NIOCore

/// Gotify's `POST /message` (what Apprise's `gotify://`, scripts and Gotify's own CLI send): the
/// application token is a publish key, sent as `X-Gotify-Key`, `?token=` or `Authorization:
/// Bearer`; the message goes to the key's target (`app.<id>.publish_keys`: `KEY=channel:NAME`,
/// `KEY=user:ID`, `KEY=all`; a key without one sends to everyone of the app, as a Gotify
/// application's messages reach all its user's clients). The answer is Gotify's message JSON.
package struct GotifyRoutes: Dialect {
    package static let settingsKey = "gotify"
    package static let name = "Gotify"
    package static let settingsTitle = "Gotify publishing"
    package static var declaredSettings: [any DeclaredSetting] { settingsDeclared.all }
    package static var routesSummary: String { path }
    /// The `source` of the notifications it sends.
    package static let source = "gotify"
    package static let path = "/message"

    package let store: any HeraldStore
    package let apps: AppDirectory
    package let dispatcher: Dispatcher
    package let settings: [String: PublishConfiguration]
    package let maxBodyBytes: Int
    package let now: @Sendable () -> Date

    package init(context: DialectContext, settings: [String: PublishConfiguration]) {
        store = context.store
        apps = context.apps
        dispatcher = context.dispatcher
        self.settings = settings
        maxBodyBytes = context.maxBodyBytes
        now = context.now
    }

    package static func status(_ settings: PublishConfiguration?) -> (enabled: Bool, detail: String) {
        let app = settings ?? PublishConfiguration()
        return (app.enabled, "publish keys as application tokens; \(app.messagesPerMinute) messages a minute each")
    }

    package func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        table.on(router.group(), prefix: "", Self.messageOperation, use: message)
    }

    /// Refused tokens from an address past `http.auth_failures_per_minute`, in Gotify's body.
    package static func tooManyRefusedCredentials(path: String, retryAfter: Int) -> Response? {
        guard path == Self.path else { return nil }
        return GotifyError(
            status: .tooManyRequests, description: "too many requests with invalid tokens from this address"
        ).response(retryAfter: retryAfter)
    }

    /// `POST /message`.
    @Sendable func message(_ request: Request, context: HeraldRequestContext) async -> Response {
        do {
            let query = request.uri.queryParameters
            let (publisher, fingerprint) = try authenticate(request, query: query)
            let app = settings[publisher.appID] ?? PublishConfiguration()
            guard app.enabled else { throw GotifyError.forbidden() }
            let body: ByteBuffer
            do {
                body = try await request.body.collect(upTo: maxBodyBytes)
            } catch {
                throw GotifyError.tooLarge("the body is larger than \(maxBodyBytes) bytes")
            }
            var fields: [String: JSONValue] = [:]
            for name in ["title", "message", "priority"] {
                if let value = query[Substring(name)] { fields[name] = .string(String(value)) }
            }
            for (name, value) in try Self.fields(of: body, contentType: request.headers[.contentType]) {
                fields[name] = value
            }
            let message = try GotifyMessage(fields: fields)
            let now = now()
            let target = (publisher.target ?? .all).notificationTarget
            var send = message.sendRequest(to: target, appID: publisher.appID, source: Self.source)
            send.dialect = Self.settingsKey
            let notification: PushNotification
            switch try await Publishing.publish(
                send, appID: publisher.appID, bucket: "gotify:\(publisher.appID):\(fingerprint)",
                perMinute: app.messagesPerMinute, store: store, dispatcher: dispatcher, now: now)
            {
            case .accepted(let accepted): notification = accepted
            case .limited(let retryAfter): return GotifyError.tooManyRequests().response(retryAfter: retryAfter)
            case .tooLarge(let reason):
                throw GotifyError.tooLarge("the message is too large for the devices' providers: \(reason)")
            }
            context.logger.debug(
                "gotify message accepted",
                metadata: [
                    "herald.notification": "\(notification.id)", "herald.app": "\(publisher.appID)",
                    "herald.key": "\(fingerprint)",
                ])
            return Self.answer(message, notification: notification, appID: publisher.appID, key: fingerprint)
        } catch let error as GotifyError {
            context.logger.info("gotify message refused", metadata: ["herald.error": "\(error.status.code)"])
            return error.response()
        } catch {
            context.logger.error("gotify message failed", metadata: ["herald.cause": "\(type(of: error))"])
            return GotifyError.internalError().response()
        }
    }

    /// The application token, in Gotify's order: `?token=`, `X-Gotify-Key`, `Authorization: Bearer`.
    /// - Throws: `GotifyError` `401` for none, or a token that is not a publish key.
    private func authenticate(
        _ request: Request, query: Parameters
    ) throws(GotifyError) -> (Publisher, fingerprint: String) {
        var token = query[Substring("token")].map(String.init) ?? request.headers[Self.gotifyKey]
        if token == nil, let authorization = request.headers[.authorization],
            authorization.lowercased().hasPrefix("bearer ")
        {
            token = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        }
        guard let token, let publisher = apps.publisher(forKey: token) else { throw .unauthorized() }
        return (publisher, SecretFingerprint.of(token))
    }

    /// The body's fields, by its content type: JSON (with `extras`), a URL-encoded form, or
    /// multipart form data (`curl -F`); an empty body has none.
    /// - Throws: `GotifyError` `400` for a body that is not of its type.
    static func fields(of body: ByteBuffer, contentType: String?) throws(GotifyError) -> [String: JSONValue] {
        guard body.readableBytes > 0 else { return [:] }
        let type = (contentType ?? "").lowercased()
        let bytes = Array(body.readableBytesView)
        if type.hasPrefix("multipart/form-data") {
            guard let boundary = Self.boundary(of: contentType ?? "") else {
                throw .badRequest("the multipart body has no boundary")
            }
            guard let form = MultipartForm.fields(bytes, boundary: boundary) else {
                throw .badRequest("the multipart body is not a form")
            }
            return Fields(title: form["title"], message: form["message"], priority: form["priority"]).json
        }
        if type.hasPrefix("application/x-www-form-urlencoded") {
            do {
                return try URLEncodedFormDecoder().decode(Fields.self, from: String(decoding: bytes, as: UTF8.self))
                    .json
            } catch {
                throw .badRequest("the form is malformed")
            }
        }
        let parsed: JSONValue
        do throws(HeraldError) {
            parsed = try JSONValue.parse(bytes)
        } catch {
            throw .badRequest("the body is not JSON, a form or multipart form data")
        }
        guard case .object(let object) = parsed else { throw .badRequest("the body must be a JSON object") }
        return object
    }

    /// The `boundary` parameter of a multipart content type.
    static func boundary(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    /// A form's fields (forms carry text; `extras` only comes as JSON).
    struct Fields: Decodable {
        var title: String?
        var message: String?
        var priority: String?

        var json: [String: JSONValue] {
            var fields: [String: JSONValue] = [:]
            fields["title"] = title.map(JSONValue.string)
            fields["message"] = message.map(JSONValue.string)
            fields["priority"] = priority.map(JSONValue.string)
            return fields
        }
    }

    /// Gotify's message as it answers a publish: `id` a number (from the notification's
    /// time-ordered id; the notification's own id is in `extras.herald::notification.id`),
    /// `appid` a number for the key, the priority, and the date.
    static func answer(_ message: GotifyMessage, notification: PushNotification, appID: String, key: String) -> Response
    {
        let hex = notification.id.replacingOccurrences(of: "-", with: "")
        var extras = message.extras
        extras["herald::notification"] = .object(["id": .string(notification.id)])
        let body = JSONValue.object([
            "id": .number(JSONNumber(Int(hex.prefix(13), radix: 16) ?? 0)),
            "appid": .number(JSONNumber(Int(key.prefix(6), radix: 16) ?? 0)),
            "message": .string(message.message), "title": .string(message.title ?? appID),
            "priority": .number(JSONNumber(message.priority)), "extras": .object(extras),
            "date": InstallationView.timestamp(notification.createdAt),
        ])
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body.serialized())))
    }

    static let gotifyKey = HTTPField.Name("X-Gotify-Key")!
}
