import Foundation
import HeraldCore

extension MemoryStore: DispatchRegistry {
    public func register(
        _ registration: InstallationRegistration, appID: String, now: Date
    ) async throws -> RegistrationResult {
        change { state in
            let identity = registration.token.identity
            let byToken = state.installations.values.first {
                $0.appID == appID && $0.service == registration.service && $0.token.identity == identity
            }
            let byDevice = registration.deviceID.flatMap { deviceID in
                state.installations.values.first {
                    $0.appID == appID && $0.deviceID == deviceID && $0.service == registration.service
                }
            }
            let (existing, replaced) = registration.match(deviceHolder: byDevice, tokenHolder: byToken)
            if let replaced { state.removeInstallation(replaced.id) }
            if var installation = existing {
                installation.merge(registration, now: now)
                state.installations[installation.id] = installation
                return RegistrationResult(installation: installation, created: false)
            }
            let installation = Installation(registration, id: Identifier.make(now: now), appID: appID, now: now)
            state.installations[installation.id] = installation
            return RegistrationResult(installation: installation, created: true)
        }
    }

    public func update(_ installation: Installation, now: Date) async throws -> Installation? {
        try change { state in
            guard state.installations[installation.id]?.appID == installation.appID else { return nil }
            let others = state.installations.values.filter {
                $0.id != installation.id && $0.appID == installation.appID && $0.service == installation.service
            }
            if let deviceID = installation.deviceID, others.contains(where: { $0.deviceID == deviceID }) {
                throw HeraldError(
                    kind: .conflict, code: "device_id_in_use",
                    message: "Another installation of this service already has this device_id.", field: "device_id")
            }
            for holder in others where holder.token.identity == installation.token.identity {
                state.removeInstallation(holder.id)
            }
            var updated = installation
            updated.updatedAt = now
            state.installations[installation.id] = updated
            return updated
        }
    }

    public func deleteInstallation(appID: String, id: String) async throws -> Bool {
        change { state in
            guard state.installations[id]?.appID == appID else { return false }
            state.removeInstallation(id)
            return true
        }
    }

    public func deleteInstallations(appID: String, userID: String) async throws -> InstallationRemoval {
        change { state in
            let removed = state.installations.values.filter { $0.appID == appID && $0.userID == userID }
                .sorted { $0.id < $1.id }
            for installation in removed { state.removeInstallation(installation.id) }
            return InstallationRemoval(count: removed.count, withEndpoints: removed.filter { $0.snsEndpointARN != nil })
        }
    }

    public func installations(appID: String, ids: [String]) async throws -> [Installation] {
        read { state in
            Set(ids).compactMap { state.installations[$0] }.filter { $0.appID == appID }.sorted { $0.id < $1.id }
        }
    }

    // MARK: What tests arrange and inspect through the API's side of a SQL store

    /// One installation of an app, as stored.
    public func installation(appID: String, id: String) -> Installation? {
        read { state in state.installations[id].flatMap { $0.appID == appID ? $0 : nil } }
    }

    /// Replaces an installation's preferences (what the preferences API stores); false when the
    /// installation does not exist.
    public func setPreferences(appID: String, installationID: String, preferences: Preferences, now: Date) -> Bool {
        change { state in
            guard state.installations[installationID]?.appID == appID else { return false }
            state.preferences[installationID] = preferences
            return true
        }
    }
}

extension MemoryStore.State {
    /// Deletes an installation with its preferences.
    mutating func removeInstallation(_ id: String) {
        installations[id] = nil
        preferences[id] = nil
    }
}
