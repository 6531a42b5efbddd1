import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine

extension LeanCloudRoutes {
    /// `POST /1.1/push`: the push as the engine's send request; `{"objectId", "createdAt"}`.
    package func push(_ call: Call, caller: LeanCloudCaller) async throws -> Answer {
        try caller.requirePush()
        let whereValue = try await resolvedWhere(try LeanCloudPush.selection(call.body), caller)
        let request = try LeanCloudPush.request(call.body, where: whereValue, now: now())
        guard case .accepted(let notification, _) = try await dispatcher.submit(request, appID: caller.appID) else {
            throw LeanCloudFailure.internalError("The engine answered a send with a dry run.")
        }
        return Answer(
            status: .ok,
            json: .object([
                "objectId": .string(notification.id),
                "createdAt": .string(LeanCloudDate.string(notification.createdAt)),
            ]))
    }

    /// A where object with its token conditions and its `_User` sub-queries resolved against the
    /// caller's app.
    package func resolvedWhere(_ value: JSONValue?, _ caller: LeanCloudCaller) async throws -> JSONValue? {
        guard let value else { return nil }
        let tokens = try await LeanCloudQuery.tokensResolved(value) { service, token in
            try await store.installation(appID: caller.appID, service: service, token: token)?.id
        }
        return try await LeanCloudSubquery.resolved(tokens) { query in
            try await store.leanCloudUserIDs(appID: caller.appID, matching: query, limit: LeanCloudSubquery.maxMatches)
        }
    }

    /// `_User` at `/1.1/users[/{objectId}]` and `/1.1/classes/_User[/{objectId}]` (master key):
    /// create, read, update and delete — the users installation queries point at.
    package func user(_ call: Call, id: String?, caller: LeanCloudCaller) async throws -> Answer {
        try caller.requireMaster()
        let at = now()
        guard let id else {
            let user = LeanCloudUser(
                appID: caller.appID, id: LeanCloudUserObject.newID(),
                fields: try LeanCloudUserObject.fields(call.body, over: [:]), createdAt: at, updatedAt: at)
            try await store.putLeanCloudUser(user)
            return Answer(
                status: .created,
                json: .object(["objectId": .string(user.id), "createdAt": .string(LeanCloudDate.string(at))]),
                location: "/1.1/users/\(user.id)")
        }
        guard id.count <= 64, var user = try await store.leanCloudUser(appID: caller.appID, id: id) else {
            throw LeanCloudFailure.objectNotFound(LeanCloudUserObject.className, id)
        }
        switch call.method {
        case .put:
            user.fields = try LeanCloudUserObject.fields(call.body, over: user.fields)
            user.updatedAt = at
            try await store.putLeanCloudUser(user)
            return Answer(status: .ok, json: .object(["updatedAt": .string(LeanCloudDate.string(at))]))
        case .delete:
            _ = try await store.deleteLeanCloudUser(appID: caller.appID, id: id)
            return Answer(status: .ok, json: .object([:]))
        default: return Answer(status: .ok, json: LeanCloudUserObject.json(user))
        }
    }

    /// `GET /1.1/tables/Notifications/{id}` (the SDKs' `Notification.fetch`) and
    /// `/1.1/classes/_Notification/{id}`: the notification's status, for any caller of the app
    /// that knows its id (the SDK fetches it with the key it pushed with).
    package func notification(_ id: String, caller: LeanCloudCaller) async throws -> Answer {
        guard id.count <= 64, let notification = try await store.notification(appID: caller.appID, id: id) else {
            throw LeanCloudFailure.objectNotFound("_Notification", id)
        }
        return Answer(status: .ok, json: LeanCloudNotification.json(notification))
    }

    /// `GET /1.1/classes/_Notification` (master key): the app's LeanCloud pushes, with `where` and
    /// `order` over their rendered fields (``LeanCloudNotificationQuery``), `skip`, `limit`, `keys`,
    /// `count`, run by the store as its own query.
    package func queryNotifications(_ call: Call, caller: LeanCloudCaller) async throws -> Answer {
        try caller.requireMaster()
        let listing = try LeanCloudListing(call.query)
        var query = NotificationQuery.condition(field: .source, op: .equal(.string(Self.source)))
        if let text = call.query["where"], !text.isEmpty {
            guard text.count <= Self.maxWhereLength, let value = try? JSONValue.parse(Array(text.utf8)) else {
                throw LeanCloudFailure.invalidQuery(
                    "where must be a JSON object of at most \(Self.maxWhereLength) characters.")
            }
            query = .and([query, try LeanCloudNotificationQuery.query(parsing: value)])
        }
        let notifications =
            listing.limit == 0
            ? []
            : try await store.notifications(
                appID: caller.appID, matching: query, order: LeanCloudNotificationQuery.order(call.query["order"]),
                skip: listing.skip, limit: listing.limit)
        let count = listing.count ? try await store.countNotifications(appID: caller.appID, matching: query) : nil
        return listing.answer(notifications.map(LeanCloudNotification.json), count: count)
    }

    /// `POST /1.1/batch`: `{"requests": [{"method", "path", "body"}]}`, each performed as its own
    /// call with the batch's credentials; the answer lists `{"success": …}` or `{"error": …}` in order.
    package func batch(_ call: Call, caller: LeanCloudCaller) async throws -> Answer {
        guard case .array(let requests)? = call.body["requests"] else {
            throw LeanCloudFailure.malformedJSON("requests must be an array.")
        }
        guard requests.count <= 50 else { throw LeanCloudFailure.invalidType("A batch holds at most 50 requests.") }
        var results: [JSONValue] = []
        for request in requests {
            do {
                guard case .object(let members) = request, case .string(let method)? = members["method"],
                    case .string(let path)? = members["path"]
                else { throw LeanCloudFailure.malformedJSON("Each request has a method and a path.") }
                let parts = path.split(separator: "?", maxSplits: 1)
                let segments = (parts.first ?? "").split(separator: "/")
                guard segments.first == "1.1", let httpMethod = HTTPRequest.Method(method.uppercased()),
                    httpMethod != .post || segments.dropFirst().first != "batch"
                else { throw LeanCloudFailure(status: .notFound, code: 101, message: "Route not found: \(path).") }
                var body: [String: JSONValue] = [:]
                switch members["body"] {
                case nil, .null?: break
                case .object(let object)?: body = object
                default: throw LeanCloudFailure.malformedJSON("A request's body must be an object.")
                }
                var query: [String: String] = [:]
                if parts.count == 2 {
                    for pair in parts[1].split(separator: "&") {
                        let item = pair.split(separator: "=", maxSplits: 1).map {
                            String($0).removingPercentEncoding ?? String($0)
                        }
                        query[item[0]] = item.count == 2 ? item[1] : ""
                    }
                }
                let answer = try await perform(
                    Call(method: httpMethod, path: Array(segments.dropFirst()), query: query, body: body),
                    caller: caller)
                results.append(.object(["success": answer.json]))
            } catch {
                results.append(.object(["error": LeanCloudFailure.from(error).json]))
            }
        }
        return Answer(status: .ok, json: .array(results))
    }
}
