import Foundation
import HeraldCore

/// A batch of registrations resolved in memory against the rows it may touch, with the identity
/// rules of ``PostgresStore/register(_:appID:now:)`` applied one registration after another, so the
/// store can write the outcome in a few statements.
struct RegistrationBatch {
    /// An installation as the batch leaves it.
    struct Row {
        var installation: Installation
        var token: SealedToken
        /// Whether the row is in the database already (an update) or new (an insert).
        var stored: Bool
    }

    private struct TokenKey: Hashable {
        var service: PushService
        var index: [UInt8]
    }

    private struct DeviceKey: Hashable {
        var service: PushService
        var deviceID: String
    }

    /// Rows by id: read ones that the batch touched, and new ones.
    private(set) var rows: [String: Row] = [:]
    /// Ids in the order the batch first wrote them.
    private(set) var order: [String] = []
    /// Stored rows the batch deleted (a token moved away from them).
    private(set) var deleted: Set<String> = []
    private var byToken: [TokenKey: String] = [:]
    private var byDevice: [DeviceKey: String] = [:]
    private var untouched: [String: Row] = [:]

    /// Starts from the stored rows the batch names (by token or device id).
    init(existing: [(Installation, SealedToken)]) {
        for (installation, token) in existing {
            let row = Row(installation: installation, token: token, stored: true)
            untouched[installation.id] = row
            index(row)
        }
    }

    /// Applies one registration, as a single `register` would.
    mutating func register(
        _ registration: InstallationRegistration, sealed token: SealedToken, appID: String, now: Date
    ) -> RegistrationResult {
        let tokenHolder = byToken[TokenKey(service: registration.service, index: token.index)].flatMap(row)
        let deviceHolder = registration.profile.deviceID.flatMap {
            byDevice[DeviceKey(service: registration.service, deviceID: $0)]
        }.flatMap(row)
        let (existing, replaced) = registration.match(deviceHolder: deviceHolder, tokenHolder: tokenHolder) {
            $0.installation
        }
        if let replaced { delete(replaced) }
        if var row = existing {
            unindex(row)
            row.installation.merge(registration, now: now)
            row.token = token
            put(row)
            return RegistrationResult(installation: row.installation, created: false)
        }
        let installation = Installation(registration, id: Identifier.make(now: now), appID: appID, now: now)
        put(Row(installation: installation, token: token, stored: false))
        return RegistrationResult(installation: installation, created: true)
    }

    private func row(_ id: String) -> Row? { rows[id] ?? untouched[id] }

    private mutating func put(_ row: Row) {
        let id = row.installation.id
        if rows[id] == nil { order.append(id) }
        untouched[id] = nil
        rows[id] = row
        index(row)
    }

    private mutating func delete(_ row: Row) {
        let id = row.installation.id
        unindex(row)
        rows[id] = nil
        untouched[id] = nil
        if row.stored { deleted.insert(id) }
    }

    private mutating func index(_ row: Row) {
        let installation = row.installation
        byToken[TokenKey(service: installation.service, index: row.token.index)] = installation.id
        if let deviceID = installation.deviceID {
            byDevice[DeviceKey(service: installation.service, deviceID: deviceID)] = installation.id
        }
    }

    private mutating func unindex(_ row: Row) {
        let installation = row.installation
        let tokenKey = TokenKey(service: installation.service, index: row.token.index)
        if byToken[tokenKey] == installation.id { byToken[tokenKey] = nil }
        if let deviceID = installation.deviceID {
            let deviceKey = DeviceKey(service: installation.service, deviceID: deviceID)
            if byDevice[deviceKey] == installation.id { byDevice[deviceKey] = nil }
        }
    }
}
