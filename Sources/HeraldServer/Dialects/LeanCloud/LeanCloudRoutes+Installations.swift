import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine

extension LeanCloudRoutes {
    /// The most installations one query returns (LeanCloud's own `limit` maximum).
    static let maxQueryLimit = 1000
    /// The longest `where` parameter a query takes, in characters.
    static let maxWhereLength = 2048

    /// `POST /1.1/installations` or `/1.1/classes/_Installation`: creates an installation, or
    /// updates the one holding the `deviceToken` / `installationId` given. `201` with `Location`
    /// for a new one, `200` for an update; `fetchWhenSave=true` returns every field.
    func saveInstallation(_ call: Call, caller: LeanCloudCaller) async throws -> Answer {
        if call.body["objectId"] != nil { throw LeanCloudFailure.invalidType("objectId is set by the server.") }
        if !caller.master,
            let retryAfter = try await limit.spend(appID: caller.appID, by: .address(caller.address), now: now())
        {
            throw LeanCloudFailure.tooManyRequests(
                "Too many installations saved; try again in \(retryAfter) seconds.", retryAfter: retryAfter)
        }
        let existing = try await existingInstallation(call.body, appID: caller.appID)
        let save = try LeanCloudInstallation.save(call.body, over: existing)
        if save.valid != nil { try caller.requireMaster() }
        let now = self.now()
        var result = try await store.register(save.registration, appID: caller.appID, now: now)
        if let valid = save.valid, valid != result.installation.valid {
            var changed = result.installation
            changed.valid = valid
            result.installation = try await store.update(changed, now: now) ?? changed
        }
        let installation = await dispatcher.installationChanged(result.installation, previous: existing)
        var json: [String: JSONValue] = ["objectId": .string(installation.id)]
        if call.query["fetchWhenSave"] == "true", case .object(let all) = LeanCloudInstallation.json(installation) {
            json = all
        }
        json["createdAt"] = .string(LeanCloudDate.string(installation.createdAt))
        guard result.created else {
            json["updatedAt"] = .string(LeanCloudDate.string(installation.updatedAt))
            return Answer(status: .ok, json: .object(json))
        }
        return Answer(
            status: .created, json: .object(json),
            location: "\(Self.prefix)/classes/\(LeanCloudInstallation.className)/\(installation.id)")
    }

    /// The installation a save names by `deviceToken` or `installationId`, if it exists.
    private func existingInstallation(_ body: [String: JSONValue], appID: String) async throws -> Installation? {
        if let token = try LeanCloudInstallation.string(body, "deviceToken"),
            let found = try await store.installation(appID: appID, service: .apns, token: token.lowercased())
        {
            return found
        }
        if let token = try LeanCloudInstallation.string(body, "registrationId"),
            let found = try await store.installation(appID: appID, service: .fcm, token: token)
        {
            return found
        }
        if let id = try LeanCloudInstallation.string(body, "installationId") {
            return try await store.installations(appID: appID, deviceID: id).first
        }
        return nil
    }

    /// `PUT /1.1/installations/{objectId}`: sets fields and applies operations.
    func updateInstallation(_ id: String, _ call: Call, caller: LeanCloudCaller) async throws -> Answer {
        let previous = try await installation(id, caller: caller)
        let save = try LeanCloudInstallation.save(call.body, over: previous)
        if save.valid != nil { try caller.requireMaster() }
        var changed = previous
        changed.platform = save.registration.platform
        changed.service = save.registration.service
        changed.token = save.registration.token
        save.registration.profile.apply(to: &changed)
        if let valid = save.valid { changed.valid = valid }
        guard let stored = try await store.update(changed, now: now()) else {
            throw LeanCloudFailure.objectNotFound(LeanCloudInstallation.className, id)
        }
        let installation = await dispatcher.installationChanged(stored, previous: previous)
        var json: [String: JSONValue] = [:]
        if call.query["fetchWhenSave"] == "true", case .object(let all) = LeanCloudInstallation.json(installation) {
            json = all
        }
        json["objectId"] = .string(installation.id)
        json["updatedAt"] = .string(LeanCloudDate.string(installation.updatedAt))
        return Answer(status: .ok, json: .object(json))
    }

    /// `GET /1.1/installations` (master key): `where`, `order`, `skip`, `limit`, `keys`, `count`,
    /// answered as `{"results": [...], "count"?}`. The app's installations are read page by page
    /// and matched in memory.
    func queryInstallations(_ call: Call, caller: LeanCloudCaller) async throws -> Answer {
        try caller.requireMaster()
        var query = InstallationQuery.and([])
        if let text = call.query["where"], !text.isEmpty {
            guard text.count <= Self.maxWhereLength else {
                throw LeanCloudFailure.invalidQuery("where is at most \(Self.maxWhereLength) characters.")
            }
            let value: JSONValue
            do throws(HeraldError) {
                value = try JSONValue.parse(Array(text.utf8))
            } catch { throw LeanCloudFailure.invalidQuery("where is not JSON: \(error.message)") }
            let resolved = try await resolvedWhere(value, caller) ?? value
            do throws(HeraldError) {
                query = try InstallationQuery(parsing: resolved, field: "where", resolver: LeanCloudQuery.resolve)
            } catch { throw LeanCloudFailure.invalidQuery(error.message) }
        }
        var matches: [[String: JSONValue]] = []
        var after: String?
        while true {
            let page = try await store.installations(
                appID: caller.appID, filter: InstallationFilter(), page: PageRequest(after: after, limit: 1000))
            for installation in page where query.matches(installation) {
                matches.append(LeanCloudInstallation.json(installation).objectValue ?? [:])
            }
            guard page.count == 1000, let last = page.last else { break }
            after = last.id
        }
        return try Self.results(matches, query: call.query)
    }

    /// A query's answer over the matching objects (in objectId order): `order` (keys, `-`
    /// descending, objectId last), `skip`, `limit` (0 to 1000; 100), `keys` (objectId, createdAt
    /// and updatedAt always), and `count` (`1`: the number of matches beside the results).
    /// - Throws: `LeanCloudFailure` 102 for a `limit` or `skip` out of range.
    static func results(_ objects: [[String: JSONValue]], query: [String: String]) throws -> Answer {
        func integer(_ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
            guard let text = query[name] else { return value }
            guard let number = Int(text), range.contains(number) else {
                throw LeanCloudFailure.invalidQuery("\(name) must be an integer in \(range).")
            }
            return number
        }
        let limit = try integer("limit", default: 100, in: 0...maxQueryLimit)
        let skip = try integer("skip", default: 0, in: 0...1_000_000)
        var sorted = objects
        if let order = query["order"], !order.isEmpty {
            let keys = order.split(separator: ",").map(String.init) + ["objectId"]
            sorted.sort { lhs, rhs in precedes(lhs, rhs, keys: keys) }
        }
        let fields = keys(query).map { $0.union(["objectId", "createdAt", "updatedAt"]) }
        let page = sorted.dropFirst(skip).prefix(limit).map { object in
            JSONValue.object(fields.map { fields in object.filter { fields.contains($0.key) } } ?? object)
        }
        var json: [String: JSONValue] = ["results": .array(Array(page))]
        if query["count"] == "1" || query["count"] == "true" { json["count"] = .number(JSONNumber(objects.count)) }
        return Answer(status: .ok, json: .object(json))
    }

    /// Whether `lhs` sorts before `rhs` by LeanCloud `order` keys (`-` descending).
    static func precedes(_ lhs: [String: JSONValue], _ rhs: [String: JSONValue], keys: [String]) -> Bool {
        for key in keys {
            let descending = key.hasPrefix("-")
            let name = descending ? String(key.dropFirst()) : key
            let order = compare(lhs[name], rhs[name])
            if order != 0 { return descending ? order > 0 : order < 0 }
        }
        return false
    }

    /// Orders two field values: missing first, then numbers, strings (dates are ISO strings).
    private static func compare(_ lhs: JSONValue?, _ rhs: JSONValue?) -> Int {
        switch (lhs, rhs) {
        case (.number(let a)?, .number(let b)?): return a < b ? -1 : (a == b ? 0 : 1)
        case (.string(let a)?, .string(let b)?): return a < b ? -1 : (a == b ? 0 : 1)
        case (nil, nil): return 0
        case (nil, _): return -1
        case (_, nil): return 1
        default: return 0
        }
    }
}
