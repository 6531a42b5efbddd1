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
        func integer(_ name: String, default value: Int, in range: ClosedRange<Int>) throws -> Int {
            guard let text = call.query[name] else { return value }
            guard let number = Int(text), range.contains(number) else {
                throw LeanCloudFailure.invalidQuery("\(name) must be an integer in \(range).")
            }
            return number
        }
        let limit = try integer("limit", default: 100, in: 0...Self.maxQueryLimit)
        let skip = try integer("skip", default: 0, in: 0...1_000_000)
        let count = call.query["count"] == "1" || call.query["count"] == "true"
        var matches: [Installation] = []
        var after: String?
        while true {
            let page = try await store.installations(
                appID: caller.appID, filter: InstallationFilter(), page: PageRequest(after: after, limit: 1000))
            matches += page.filter(query.matches)
            guard page.count == 1000, let last = page.last else { break }
            after = last.id
        }
        if let order = call.query["order"], !order.isEmpty {
            let keys = order.split(separator: ",").map(String.init)
            matches.sort { lhs, rhs in Self.precedes(lhs, rhs, keys: keys) }
        }
        let results = matches.dropFirst(skip).prefix(limit).map {
            LeanCloudInstallation.json($0, keys: Self.keys(call.query))
        }
        var json: [String: JSONValue] = ["results": .array(Array(results))]
        if count { json["count"] = .number(JSONNumber(matches.count)) }
        return Answer(status: .ok, json: .object(json))
    }

    /// Whether `lhs` sorts before `rhs` by LeanCloud `order` keys (`-` descending), objectId last.
    static func precedes(_ lhs: Installation, _ rhs: Installation, keys: [String]) -> Bool {
        let left = LeanCloudInstallation.json(lhs).objectValue ?? [:]
        let right = LeanCloudInstallation.json(rhs).objectValue ?? [:]
        for key in keys {
            let descending = key.hasPrefix("-")
            let name = descending ? String(key.dropFirst()) : key
            let order = compare(left[name], right[name])
            if order != 0 { return descending ? order > 0 : order < 0 }
        }
        return lhs.id < rhs.id
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
