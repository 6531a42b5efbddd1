import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging
import NIOCore

/// ntfy's publish API (what Apprise, scripts and monitoring tools call): the JSON form `POST /`
/// (or `PUT`) with `{"topic", "message", "title", …}`, and the topic form `PUT`/`POST /<topic>` with
/// the message as the body and ntfy's header fields, or with `X-Template` a tool's JSON webhook
/// that one of ntfy's built-in templates turns into the message (``NtfyTemplate``). The credential
/// is a publish key (`Authorization: Bearer`, or Basic with the key as the password, or ntfy's
/// `?auth=`); the topic is a channel of the key's app (a key bound to a target publishes only
/// there). The notification goes through the engine like any other; the answer is ntfy's message JSON.
package struct NtfyRoutes: Dialect {
    package static let settingsKey = "ntfy"
    package static let name = "ntfy"
    package static let settingsTitle = "ntfy publishing"
    package static var declaredSettings: [any DeclaredSetting] { settingsDeclared.all }
    package static var routesSummary: String { "POST/PUT /, POST/PUT /<topic>" }
    /// The `source` of the notifications it sends.
    package static let source = "ntfy"

    /// First path segments Herald serves itself (or keeps for later): never a topic of the path form.
    package static let reservedTopics: Set<String> = [
        "v1", "v2", "sns", "ha", "up", "api", "1.1", "message", "console", "metrics", "healthz", "readyz",
        "openapi.yaml", "_matrix", "docs", "static", "file", "auth", "account", "application", "client", "health",
        "stream", "version", "plugin", "current",
    ]

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
        return (app.enabled, "publish keys; \(app.messagesPerMinute) messages a minute each")
    }

    package func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        for method in [HTTPRequest.Method.post, .put] {
            table.on(router.group(), prefix: "", Self.jsonOperation(method), use: publishJSON)
            table.on(router.group(), prefix: "", Self.topicOperation(method), use: publishToTopic)
            table.on(router.group(), prefix: "", Self.sequenceOperation(method), use: publishToSequence)
        }
        registerSequenceActions(on: router, table: &table)
    }

    /// Refused credentials from an address past `http.auth_failures_per_minute`: ntfy's `42909`.
    package static func tooManyRefusedCredentials(path: String, retryAfter: Int) -> Response? {
        guard path == "/" || !path.dropFirst().contains("/") else { return nil }
        let segment = String(path.dropFirst())
        guard segment.isEmpty || (NtfyMessage.isValidTopic(segment) && !reservedTopics.contains(segment)) else {
            return nil
        }
        return NtfyError.tooManyAuthFailures().response(retryAfter: retryAfter)
    }

    /// A publish to one of Herald's own first path segments (`POST /v1`, `PUT /metrics`), which the
    /// router keeps from the topic route: ntfy's `40009`.
    package static func unrouted(method: HTTPRequest.Method, path: String) -> Response? {
        guard method == .post || method == .put, path.count > 1, !path.dropFirst().contains("/") else { return nil }
        return NtfyError.invalidTopic("topic invalid (reserved: Herald serves \(path) itself)").response()
    }

    /// `POST /` (or `PUT /`): the JSON form.
    @Sendable func publishJSON(_ request: Request, context: HeraldRequestContext) async -> Response {
        await publish(request, topic: nil, context: context)
    }

    /// `PUT`/`POST /<topic>`: the topic form.
    @Sendable func publishToTopic(_ request: Request, context: HeraldRequestContext) async -> Response {
        do {
            return await publish(request, topic: try Self.topic(context), context: context)
        } catch {
            return error.response()
        }
    }

    /// The path's topic: ntfy's topic rule, and not one of Herald's own first segments.
    /// - Throws: `NtfyError` `40009`.
    static func topic(_ context: HeraldRequestContext) throws(NtfyError) -> String {
        let topic = context.parameters.get("topic") ?? ""
        guard NtfyMessage.isValidTopic(topic), !reservedTopics.contains(topic.lowercased()) else {
            throw NtfyError.invalidTopic(
                reservedTopics.contains(topic.lowercased())
                    ? "topic invalid (reserved: Herald serves /\(topic) itself)" : "topic invalid")
        }
        return topic
    }

    func publish(
        _ request: Request, topic: String?, sequence: String? = nil, context: HeraldRequestContext
    ) async -> Response {
        do {
            let query = request.uri.queryParameters
            let publisher = try authenticate(request, query: query)
            let app = settings[publisher.appID] ?? PublishConfiguration()
            guard app.enabled else { throw NtfyError.forbidden() }
            let parameter: (String) -> String? = { name in
                if let field = HTTPField.Name(name), let value = request.headers[field] { return value }
                return query[Substring(name)].map(String.init)
            }
            // A templated publish's body is a tool's JSON webhook (NtfyTemplate), taken up to
            // ntfy's JSON limit within http.max_body_bytes.
            let templated = topic != nil && NtfyTemplate(NtfyMessage.value("template", parameter)) != nil
            let limit =
                topic == nil
                ? 2 * NtfyMessage.maxMessageBytes
                : templated ? min(NtfyTemplate.maxBodyBytes, maxBodyBytes) : NtfyMessage.maxMessageBytes
            var body: [UInt8] = []
            for try await buffer in request.body {
                guard body.count + buffer.readableBytes <= limit else {
                    throw topic == nil || templated ? NtfyError.jsonTooLarge() : NtfyError.tooLarge()
                }
                body.append(contentsOf: buffer.readableBytesView)
            }
            let now = now()
            let message = try NtfyMessage(
                topic: topic, sequenceID: sequence, body: body, parameter: parameter, now: now)
            var send = message.sendRequest(
                to: try Self.target(of: publisher, topic: message.topic), source: Self.source, now: now)
            send.dialect = Self.settingsKey
            if let retryAfter = try await Publishing.spend(
                bucket: publisher.bucket, perMinute: app.messagesPerMinute, store: store, now: now)
            {
                return NtfyError.tooManyRequests().response(retryAfter: retryAfter)
            }
            let notification: PushNotification
            switch try await Publishing.accepting({
                if let sequence = message.sequenceID {
                    return try await publish(send, sequence: sequence, topic: message.topic, appID: publisher.appID)
                }
                guard case .accepted(let accepted, _) = try await dispatcher.submit(send, appID: publisher.appID) else {
                    throw HeraldError.internal("The engine answered a send with a dry run.")
                }
                return accepted
            }) {
            case .accepted(let accepted): notification = accepted
            case .limited(let retryAfter): return NtfyError.tooManyRequests().response(retryAfter: retryAfter)
            case .tooLarge(let reason):
                throw NtfyError.tooLarge("message too large for the devices' providers: \(reason)")
            }
            context.logger.debug(
                "ntfy message accepted",
                metadata: [
                    "herald.notification": "\(notification.id)", "herald.app": "\(publisher.appID)",
                    "herald.topic": "\(message.topic)", "herald.key": "\(publisher.fingerprint)",
                ])
            return Self.answer(message, notification: notification, now: now)
        } catch let error as NtfyError {
            context.logger.info("ntfy publish refused", metadata: ["herald.error": "\(error.code)"])
            return error.response()
        } catch {
            context.logger.error("ntfy publish failed", metadata: ["herald.cause": "\(type(of: error))"])
            return NtfyError.internalError().response()
        }
    }

    /// The publish key of the request, in the forms ntfy's clients send it: `Authorization: Bearer
    /// KEY`; `Authorization: Basic` with the key as the password (any user name, or none); or
    /// `?auth=` holding the whole `Authorization` value in base64url.
    /// - Throws: `NtfyError` `40101` for none, or a key that is not a publish key.
    func authenticate(_ request: Request, query: Parameters) throws(NtfyError) -> PublishCaller {
        var authorization = request.headers[.authorization]
        if let auth = query[Substring("auth")].map(String.init) {
            authorization = Base64URL.decode(auth.trimmingCharacters(in: CharacterSet(charactersIn: "=")))
                .map { String(decoding: $0, as: UTF8.self) }
        }
        guard let authorization else { throw .unauthorized() }
        let key: String
        if authorization.lowercased().hasPrefix("bearer ") {
            key = String(authorization.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        } else if authorization.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":")
        {
            key = String(pair[pair.index(after: colon)...])
        } else {
            throw .unauthorized()
        }
        guard let publisher = apps.publisher(forKey: key) else { throw .unauthorized() }
        return PublishCaller(appID: publisher.appID, target: publisher.target, fingerprint: SecretFingerprint.of(key))
    }

    /// A caller whose publish key matched: its app, its target, and a fingerprint of the key for
    /// logs and the rate limit (never the key).
    struct PublishCaller {
        var appID: String
        var target: PublishKey.Target?
        var fingerprint: String

        /// The key's allowance of messages a minute.
        var bucket: String { "ntfy:\(appID):\(fingerprint)" }
    }

    /// Who a message to `topic` goes to: the topic's channel, or the key's own target.
    /// - Throws: `NtfyError` `40301` for a key bound to another channel.
    static func target(of publisher: PublishCaller, topic: String) throws(NtfyError) -> NotificationTarget {
        switch publisher.target {
        case nil: return NotificationTarget(audience: .channels([topic]))
        case .channel(let channel)?:
            guard channel == topic else { throw NtfyError.forbidden() }
            return PublishKey.Target.channel(channel).notificationTarget
        case let bound?: return bound.notificationTarget
        }
    }

    /// ntfy's answer to a publish: the message as its subscribers get it, with the notification's
    /// id (`GET /v1/notifications/{id}` shows it).
    static func answer(_ message: NtfyMessage, notification: PushNotification, now: Date) -> Response {
        let time = Int((notification.notBefore ?? now).timeIntervalSince1970)
        var body: [String: JSONValue] = [
            "id": .string(notification.id), "time": .number(JSONNumber(time)),
            "expires": .number(JSONNumber(time + 43_200)), "event": .string("message"), "topic": .string(message.topic),
            "message": .string(message.message),
        ]
        body["title"] = message.title.map(JSONValue.string)
        body["priority"] = message.priority.map { .number(JSONNumber($0)) }
        if !message.tags.isEmpty { body["tags"] = .array(message.tags.map(JSONValue.string)) }
        body["click"] = message.click.map(JSONValue.string)
        body["icon"] = message.icon.map(JSONValue.string)
        body["actions"] = message.actions
        if message.markdown { body["content_type"] = .string("text/markdown") }
        // ntfy leaves out a sequence id that is the message's own id.
        if let sequence = message.sequenceID, sequence != notification.id { body["sequence_id"] = .string(sequence) }
        return json(body)
    }

    /// One JSON object and a newline, as ntfy writes it.
    static func json(_ body: [String: JSONValue]) -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: JSONValue.object(body).serialized() + [0x0A])))
    }
}
