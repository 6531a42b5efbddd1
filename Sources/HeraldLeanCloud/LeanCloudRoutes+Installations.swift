import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine

extension LeanCloudRoutes {
    /// The longest `where` parameter a query takes, in characters.
    package static let maxWhereLength = 2048

    /// `POST /1.1/installations` or `/1.1/classes/_Installation`: creates an installation, or
    /// updates the one holding the `deviceToken` / `installationId` given. `201` with `Location`
    /// for a new one, `200` for an update; `fetchWhenSave=true` returns every field.
    package func saveInstallation(_ call: Call, caller: LeanCloudCaller) async throws -> Answer {
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
        var result = try await dispatcher.registrations.register(
            save.registration, appID: caller.appID, now: now, previous: existing)
        // 003: the app's own save makes an installation valid again, as a re-registration does; the master
        // key changes `valid` only when it sets it, so its save keeps an invalid installation invalid.
        var changed = result.installation
        if let valid = save.valid {
            changed.valid = valid
        } else if caller.master, let existing, !existing.valid {
            changed.valid = false
            changed.invalidatedAt = existing.invalidatedAt
            changed.failureCount = existing.failureCount
        }
        if changed != result.installation {
            result.installation =
                try await dispatcher.registrations.update(changed, from: result.installation, now: now) ?? changed
        }
        let installation = result.installation
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
    package func updateInstallation(_ id: String, _ call: Call, caller: LeanCloudCaller) async throws -> Answer {
        let previous = try await installation(id, caller: caller)
        let save = try LeanCloudInstallation.save(call.body, over: previous)
        if save.valid != nil { try caller.requireMaster() }
        var changed = previous
        changed.platform = save.registration.platform
        changed.service = save.registration.service
        changed.token = save.registration.token
        save.registration.profile.apply(to: &changed)
        if let valid = save.valid {
            changed.valid = valid
        } else if !caller.master {
            // 003: an installation marked invalid is valid again once the app updates it (its updatedAt moves).
            changed.revalidate()
        }
        guard let installation = try await dispatcher.registrations.update(changed, from: previous, now: now()) else {
            throw LeanCloudFailure.objectNotFound(LeanCloudInstallation.className, id)
        }
        var json: [String: JSONValue] = [:]
        if call.query["fetchWhenSave"] == "true", case .object(let all) = LeanCloudInstallation.json(installation) {
            json = all
        }
        json["objectId"] = .string(installation.id)
        json["updatedAt"] = .string(LeanCloudDate.string(installation.updatedAt))
        return Answer(status: .ok, json: .object(json))
    }

    /// `GET /1.1/installations` (master key): `where`, `order`, `skip`, `limit`, `keys`, `count`,
    /// answered as `{"results": [...], "count"?}`. The where and order are translated to Herald's
    /// query language, which the store runs as its own query.
    package func queryInstallations(_ call: Call, caller: LeanCloudCaller) async throws -> Answer {
        try caller.requireMaster()
        let listing = try LeanCloudListing(call.query)
        let order = try LeanCloudQuery.order(call.query["order"])
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
        let installations =
            listing.limit == 0
            ? []
            : try await store.installations(
                appID: caller.appID, matching: query, order: order, skip: listing.skip, limit: listing.limit)
        let count = listing.count ? try await store.countInstallations(appID: caller.appID, matching: query) : nil
        return listing.answer(installations.map { LeanCloudInstallation.json($0) }, count: count)
    }
}
