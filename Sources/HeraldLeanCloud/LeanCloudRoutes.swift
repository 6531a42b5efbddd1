import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import Hummingbird
import Logging
import NIOCore

/// The LeanCloud (AVOS Cloud) push API (docs/architecture.md, "Adding a dialect"): `_Installation` and `_Notification`, `/1.1/push`
/// and `/1.1/batch`, as the SDKs and the REST guide call them, over Herald's registry and engine.
/// Point an SDK at Herald with `LEANCLOUD_API_SERVER=<Herald URL>`; callers authenticate as
/// ``LeanCloudCaller`` says, and every error is LeanCloud's `{"code", "error"}` (``LeanCloudFailure``).
package struct LeanCloudRoutes: Dialect {
    package static let settingsKey = "leancloud"
    package static let prefix = "/1.1"
    /// The `source` of the notifications the dialect sends.
    package static let source = "leancloud"

    package let store: any HeraldStore & LeanCloudUserStore
    package let dispatcher: Dispatcher
    /// The apps serving the dialect, by LeanCloud app id.
    package let apps: [String: (appID: String, settings: LeanCloudConfiguration)]
    /// The app keys' allowance of registrations (`app.<id>.registrations_per_minute`), per address.
    package let limit: RegistrationLimit
    package let maxBodyBytes: Int
    package let now: @Sendable () -> Date

    package init(context: DialectContext, settings: [String: LeanCloudConfiguration]) throws {
        store = try context.store((any HeraldStore & LeanCloudUserStore).self, for: Self.self)
        limit = RegistrationLimit(perMinute: context.registrationsPerMinute, store: context.store)
        dispatcher = context.dispatcher
        var apps: [String: (appID: String, settings: LeanCloudConfiguration)] = [:]
        for (id, app) in settings.sorted(by: { $0.key < $1.key }) where app.isEnabled {
            if let lcID = app.appID, apps[lcID] == nil { apps[lcID] = (id, app) }
        }
        self.apps = apps
        maxBodyBytes = context.maxBodyBytes
        now = context.now
    }

    package func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        let group = router.group()
        for operation in Self.operations { table.on(group, prefix: "", operation, use: handle) }
    }

    /// One call after authentication: method, path below `/1.1`, query and body.
    package struct Call {
        package var method: HTTPRequest.Method
        package var path: [Substring]
        package var query: [String: String]
        package var body: [String: JSONValue]
    }

    /// A LeanCloud answer.
    package struct Answer {
        package var status: HTTPResponse.Status
        package var json: JSONValue
        package var location: String?
    }

    /// Every route: authenticates, reads the body, performs the call, answers LeanCloud's way.
    @Sendable package func handle(_ request: Request, context: HeraldRequestContext) async -> Response {
        do {
            var caller = try LeanCloudCaller.authenticate(request.headers, apps: apps, now: now())
            caller.address = context.clientAddress
            let path = request.uri.path.split(separator: "/").dropFirst()
            var query: [String: String] = [:]
            for (key, value) in request.uri.queryParameters { query[String(key)] = String(value) }
            var body: [String: JSONValue] = [:]
            if request.method == .post || request.method == .put {
                body = try await Self.body(request, limit: maxBodyBytes)
            }
            let answer = try await perform(
                Call(method: request.method, path: Array(path), query: query, body: body), caller: caller)
            var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
            if let location = answer.location { headers[.location] = location }
            return Response(
                status: answer.status, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.json.serialized())))
        } catch {
            let failure = LeanCloudFailure.from(error)
            var metadata: Logger.Metadata = ["herald.error": "\(failure.code)"]
            if !(error is LeanCloudFailure) { metadata["herald.cause"] = "\(type(of: error))" }
            if failure.status.code >= 500 {
                context.logger.error("leancloud request failed", metadata: metadata)
            } else {
                context.logger.info("leancloud request refused", metadata: metadata)
            }
            var response = Self.json(status: failure.status, failure.json)
            if let retryAfter = failure.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        }
    }

    /// Performs one authenticated call (a route's, or one request of a batch).
    /// - Throws: `LeanCloudFailure`, or the store's and engine's errors.
    package func perform(_ call: Call, caller: LeanCloudCaller) async throws -> Answer {
        switch (call.method, Resource(call.path)) {
        case (.post, .installations(nil)?): return try await saveInstallation(call, caller: caller)
        case (.get, .installations(nil)?): return try await queryInstallations(call, caller: caller)
        case (.get, .installations(let id?)?):
            let installation = try await installation(id, caller: caller)
            return Answer(status: .ok, json: LeanCloudInstallation.json(installation, keys: Self.keys(call.query)))
        case (.put, .installations(let id?)?): return try await updateInstallation(id, call, caller: caller)
        // Like update, delete takes the id the caller names (LeanCloud's default _Installation
        // permissions: only listing is the master key's).
        case (.delete, .installations(let id?)?):
            let installation = try await installation(id, caller: caller)
            guard try await dispatcher.registrations.delete(installation) else {
                throw LeanCloudFailure.objectNotFound(LeanCloudInstallation.className, id)
            }
            return Answer(status: .ok, json: .object([:]))
        case (.post, .users(nil)?): return try await user(call, id: nil, caller: caller)
        case (.get, .users(let id?)?), (.put, .users(let id?)?), (.delete, .users(let id?)?):
            return try await user(call, id: id, caller: caller)
        case (.post, .push?): return try await push(call, caller: caller)
        case (.get, .notification(let id)?): return try await notification(id, caller: caller)
        case (.get, .notifications?): return try await queryNotifications(call, caller: caller)
        case (.post, .batch?): return try await batch(call, caller: caller)
        default: throw LeanCloudFailure(status: .notFound, code: 101, message: "Route not found.")
        }
    }

    /// What a path below `/1.1` names.
    package enum Resource: Equatable {
        /// `installations[/id]` or `classes/_Installation[/id]`.
        case installations(String?)
        /// `users[/id]` or `classes/_User[/id]`.
        case users(String?)
        /// `tables/Notifications/id` or `classes/_Notification/id`.
        case notification(String)
        /// `classes/_Notification`.
        case notifications
        case push, batch

        package init?(_ path: [Substring]) {
            switch path.count {
            case 1 where path[0] == "installations": self = .installations(nil)
            case 1 where path[0] == "push": self = .push
            case 1 where path[0] == "batch": self = .batch
            case 2 where path[0] == "installations": self = .installations(String(path[1]))
            case 1 where path[0] == "users": self = .users(nil)
            case 2 where path[0] == "users": self = .users(String(path[1]))
            case 2 where path[0] == "classes" && path[1] == "_User": self = .users(nil)
            case 3 where path[0] == "classes" && path[1] == "_User": self = .users(String(path[2]))
            case 2 where path[0] == "classes" && path[1] == "_Installation": self = .installations(nil)
            case 2 where path[0] == "classes" && path[1] == "_Notification": self = .notifications
            case 3 where path[0] == "classes" && path[1] == "_Installation": self = .installations(String(path[2]))
            case 3
            where (path[0] == "classes" && path[1] == "_Notification")
                || (path[0] == "tables" && path[1] == "Notifications"):
                self = .notification(String(path[2]))
            default: return nil
            }
        }
    }

    /// The installation `id` of the caller's app.
    /// - Throws: `LeanCloudFailure.objectNotFound`.
    package func installation(_ id: String, caller: LeanCloudCaller) async throws -> Installation {
        guard id.count <= 64, let installation = try await store.installation(appID: caller.appID, id: id) else {
            throw LeanCloudFailure.objectNotFound(LeanCloudInstallation.className, id)
        }
        return installation
    }

    /// The `keys` parameter: the fields to return, or nil for all.
    package static func keys(_ query: [String: String]) -> Set<String>? {
        query["keys"].map { Set($0.split(separator: ",").map(String.init)) }
    }

    /// The request body as a JSON object, at most `limit` bytes.
    /// - Throws: `LeanCloudFailure` 107 for a body that is not a JSON object, 116 past the limit.
    package static func body(_ request: Request, limit: Int) async throws -> [String: JSONValue] {
        var bytes: [UInt8] = []
        for try await buffer in request.body {
            guard bytes.count + buffer.readableBytes <= limit else {
                throw LeanCloudFailure.objectTooLarge("The request body is larger than \(limit) bytes.")
            }
            bytes.append(contentsOf: buffer.readableBytesView)
        }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return [:] }
        let value: JSONValue
        do throws(HeraldError) {
            value = try JSONValue.parse(bytes)
        } catch {
            throw LeanCloudFailure.malformedJSON(error.message)
        }
        guard case .object(let members) = value else {
            throw LeanCloudFailure.malformedJSON("The body must be a JSON object.")
        }
        return members
    }

    /// A JSON answer.
    package static func json(status: HTTPResponse.Status, _ value: JSONValue) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.serialized())))
    }
}

extension LeanCloudRoutes {
    /// `429 {"code": 429, "error": …}`.
    package static func tooManyRefusedCredentials(path: String, retryAfter: Int) -> Response? {
        guard path == prefix || path.hasPrefix(prefix + "/") else { return nil }
        let failure = LeanCloudFailure.tooManyRequests(
            "Too many requests with a wrong key or signature from this address; try again in \(retryAfter) seconds.")
        return json(status: failure.status, failure.json)
    }
}

extension LeanCloudRoutes {
    package static let name = "LeanCloud"
    package static let settingsTitle = "LeanCloud dialect"
    package static var declaredSettings: [any DeclaredSetting] { LeanCloudConfiguration.Settings.all }
    package static var routesSummary: String { Self.prefix }

    package static func status(_ settings: LeanCloudConfiguration?) -> (enabled: Bool, detail: String) {
        let leancloud = settings ?? LeanCloudConfiguration()
        guard leancloud.isEnabled else { return (false, "no app_id / app_key configured") }
        return (
            true,
            "client push \(leancloud.clientPush ? "allowed" : "off"), master key \(leancloud.masterKey == nil ? "none" : "set")"
        )
    }
    /// LeanCloud's installation lifecycle (003): an installation not opened (saved again) for 60 days
    /// becomes invalid until it is, one invalid for over 60 days is deleted, and one not opened for
    /// 120 days is deleted. Nothing else deletes one (no rule on failures or deliveries); notifications
    /// are kept as long as `base` keeps them.
    package static func cleanupPolicy(_ settings: LeanCloudConfiguration, base: CleanupPolicy) -> CleanupPolicy? {
        guard settings.isEnabled else { return nil }
        return CleanupPolicy(
            invalidAfter: .seconds(60 * 86_400), failureThreshold: base.failureThreshold, failingAfter: nil,
            unseenAfter: .seconds(120 * 86_400), undeliveredAfter: nil,
            notificationRetention: base.notificationRetention, staleAfter: .seconds(60 * 86_400))
    }
}
