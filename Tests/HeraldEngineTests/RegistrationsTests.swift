import Foundation
import HeraldCore
import HeraldEngine
import HeraldTestSupport
import Testing

/// The one way installations change: every register, update and removal is stored and told to the
/// transport that keeps provider-side state for its installations.
@Suite("Registrations facade")
struct RegistrationsTests {
    @Test("register, update, delete and an account deletion each reach the transport's lifecycle, once")
    func everyChangeTellsTheTransport() async throws {
        let store = MemoryStore()
        let lifecycle = RecordingLifecycleTransport()
        let dispatcher = Dispatcher(
            store: store, transports: ["app": AppTransports([lifecycle])],
            configuration: EngineConfiguration(cleanupInterval: nil))
        let registrations = dispatcher.registrations
        let now = Date()
        func registration(_ user: String) -> InstallationRegistration {
            InstallationRegistration(
                platform: .ios, service: .apns, token: .device(Fixtures.apnsToken()),
                profile: InstallationProfile(userID: user))
        }

        let first = try await registrations.register(registration("ann"), appID: "app", now: now).installation
        #expect(first.snsEndpointARN == RecordingLifecycleTransport.endpoint(of: first.id), "the endpoint is stored")
        #expect(store.installation(appID: "app", id: first.id)?.snsEndpointARN == first.snsEndpointARN)

        var renamed = first
        renamed.locale = "fr"
        let updated = try #require(try await registrations.update(renamed, from: first, now: now))
        #expect(updated.locale == "fr")
        var moved = updated
        moved.token = .device(Fixtures.apnsToken())
        _ = try await registrations.update(moved, from: updated, now: now)

        #expect(try await registrations.delete(updated))
        #expect(try await registrations.delete(updated) == false, "gone already: the transport is not told twice")

        let second = try await registrations.register(registration("bob"), appID: "app", now: now).installation
        let third = try await registrations.register(registration("bob"), appID: "app", now: now).installation
        let removal = try await registrations.deleteUser(appID: "app", userID: "bob")
        #expect(removal.count == 2)

        #expect(
            lifecycle.calls == [
                .registered(installationID: first.id, tokenChanged: true),
                .registered(installationID: first.id, tokenChanged: false),
                .registered(installationID: first.id, tokenChanged: true),
                .removed(installationID: first.id, endpoint: first.snsEndpointARN),
                .registered(installationID: second.id, tokenChanged: true),
                .registered(installationID: third.id, tokenChanged: true),
            ]
                + [second, third].sorted { $0.id < $1.id }.map {
                    .removed(installationID: $0.id, endpoint: RecordingLifecycleTransport.endpoint(of: $0.id))
                })
    }
}
