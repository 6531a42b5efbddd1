import Configuration
import Foundation
import HTTPTypes
import HeraldCore
import HeraldEngine
import Hummingbird
import OpenAPIKit

/// Another system's API served by Herald unchanged (docs/architecture.md, "Adding a dialect"): one module (`Sources/Herald<Name>`), one
/// conforming type, and one line in `HeraldApplication.dialects` (docs/architecture.md). A dialect reads its own per-app
/// settings (`app.<id>.<settingsKey>.*`), registers its routes with their OpenAPI declarations, and
/// authenticates its callers its own way over the shared ``AppDirectory`` (keys, user tokens).
package protocol Dialect: Sendable {
    /// One app's settings of the dialect.
    associatedtype Settings: Sendable

    /// The configuration key under `app.<id>` that holds the dialect's settings (`aovis`, `argus`).
    static var settingsKey: String { get }

    /// Reads app `appID`'s settings (`app.<id>.<settingsKey>.*`, declared as ``Setting``s near the
    /// settings type) from `reader`.
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    static func settings(appID: String, reader: ConfigReader) throws -> Settings

    /// The dialect over Herald's parts, with every app's settings. A dialect with records of its
    /// own takes its store from ``DialectContext/store(_:for:)`` here, so a store that does not keep
    /// them refuses the application when it is built.
    /// - Throws: ``DialectStoreMissing`` when the store does not keep the dialect's records.
    init(context: DialectContext, settings: [String: Settings]) throws

    /// Registers the dialect's routes and their middleware (its authentication) on `router`.
    func register(on router: Router<HeraldRequestContext>, table: inout RouteTable)

    /// The dialect's name in the web console ("AOVIS").
    static var name: String { get }

    /// The title of the dialect's section in the settings reference (docs/configuration.md).
    static var settingsTitle: String { get }

    /// The dialect's per-app settings, in the reference's order.
    static var declaredSettings: [any DeclaredSetting] { get }

    /// Where its routes are, as the console shows it ("/api/internal/…").
    static var routesSummary: String { get }

    /// Whether it serves an app with `settings` (nil: the app sets none of its keys), and how it is
    /// set up, as the console shows it (never a secret).
    static func status(_ settings: Settings?) -> (enabled: Bool, detail: String)

    /// The dialect's named schemas in `/openapi.yaml` (`#/components/schemas`), after the native ones.
    static var schemas: OrderedDictionary<String, JSONSchema> { get }

    /// Whether an answer of `status` on `path` (one of the dialect's routes) refused the caller's
    /// credentials, beyond the `401` every surface answers (``AuthFailureGuard`` counts both).
    static func refusesCredentials(path: String, status: HTTPResponse.Status) -> Bool

    /// The `429` for a caller at `path` (one of the dialect's routes) whose address had too many
    /// credentials refused, in the dialect's error body; nil when `path` is not the dialect's or the
    /// route answers Herald's native error body.
    static func tooManyRefusedCredentials(path: String, retryAfter: Int) -> Response?

    /// The answer to a request the router sent nowhere although one of the dialect's path
    /// templates matches it (its path belongs to another route: ntfy's `POST /v1`), in the
    /// dialect's error body; nil for Herald's native `404`/`405`.
    static func unrouted(method: HTTPRequest.Method, path: String) -> Response?

    /// The clean-up rules an app the dialect serves with `settings` starts from instead of the
    /// engine's `base` (the system the dialect copies has an installation lifecycle of its own); nil:
    /// the dialect has none. The app's `app.<id>.lifecycle.*` keys override them.
    static func cleanupPolicy(_ settings: Settings, base: CleanupPolicy) -> CleanupPolicy?
}

extension Dialect {
    /// None.
    package static var schemas: OrderedDictionary<String, JSONSchema> { [:] }

    /// Only a `401` refuses credentials.
    package static func refusesCredentials(path: String, status: HTTPResponse.Status) -> Bool { false }

    /// The native body.
    package static func tooManyRefusedCredentials(path: String, retryAfter: Int) -> Response? { nil }

    /// The native `404`/`405`.
    package static func unrouted(method: HTTPRequest.Method, path: String) -> Response? { nil }

    /// No lifecycle of its own.
    package static func cleanupPolicy(_ settings: Settings, base: CleanupPolicy) -> CleanupPolicy? { nil }
}

/// What every dialect is built from.
package struct DialectContext: Sendable {
    /// What every part of Herald keeps; a dialect's own records are asked for by type (``store(_:for:)``).
    package let store: any HeraldStore
    /// The shared key lookup and user-token verification.
    package let apps: AppDirectory
    package let dispatcher: Dispatcher
    /// The largest request body read (`http.max_body_bytes`).
    package let maxBodyBytes: Int
    /// Registrations each app may make a minute (`app.<id>.registrations_per_minute`; absent or 0: no limit).
    package let registrationsPerMinute: [String: Int]
    /// Every dialect's settings, per app.
    package let settings: DialectSettings
    package let now: @Sendable () -> Date

    package init(
        store: any HeraldStore, apps: AppDirectory, dispatcher: Dispatcher, maxBodyBytes: Int,
        registrationsPerMinute: [String: Int], settings: DialectSettings, now: @escaping @Sendable () -> Date
    ) {
        self.store = store
        self.apps = apps
        self.dispatcher = dispatcher
        self.maxBodyBytes = maxBodyBytes
        self.registrationsPerMinute = registrationsPerMinute
        self.settings = settings
        self.now = now
    }
}

extension DialectContext {
    /// The store as `Records`: ``HeraldStore`` with the protocol of `dialect`'s own records,
    /// `(any HeraldStore & SNSAPIStore).self`, declared in the dialect's module (docs/architecture.md,
    /// "Adding a dialect").
    /// - Throws: ``DialectStoreMissing`` when the store does not conform to it.
    package func store<Records, D: Dialect>(_ records: Records.Type, for dialect: D.Type) throws -> Records {
        guard let typed = store as? Records else {
            throw DialectStoreMissing(
                dialect: D.name, store: String(describing: type(of: store)), records: String(describing: Records.self))
        }
        return typed
    }
}

/// A store that does not keep a dialect's own records (it does not conform to the store protocol the
/// dialect declares): thrown when the application is built, so Herald refuses to start rather
/// than fail the dialect's requests.
package struct DialectStoreMissing: Error, Equatable, CustomStringConvertible {
    /// The dialect's name (``Dialect/name``).
    package var dialect: String
    /// The store's type.
    package var store: String
    /// The type the dialect asked for.
    package var records: String

    package var description: String {
        "The store (\(store)) does not keep the records of the \(dialect) dialect: it is not \(records)."
    }
}

extension Dialect {
    /// Reads every app's settings of the dialect.
    package static func readSettings(appIDs: [String], reader: ConfigReader) throws -> [String: any Sendable] {
        var settings: [String: any Sendable] = [:]
        for id in appIDs {
            settings[id] = try Self.settings(appID: id, reader: reader)
        }
        return settings
    }

    /// The clean-up rules app `appID` starts from by its settings of the dialect in `settings`, if
    /// the dialect has its own (``cleanupPolicy(_:base:)``).
    package static func cleanupPolicy(
        appID: String, in settings: DialectSettings, base: CleanupPolicy
    )
        -> CleanupPolicy?
    {
        settings.settings(of: Self.self)[appID].flatMap { cleanupPolicy($0, base: base) }
    }

    /// How the dialect serves app `appID`, by its settings in `settings` (the console).
    package static func status(appID: String, in settings: DialectSettings) -> (enabled: Bool, detail: String) {
        status(settings.settings(of: Self.self)[appID])
    }

    /// Builds the dialect from `context` and registers its routes.
    /// - Throws: ``DialectStoreMissing`` when the store does not keep the dialect's records.
    package static func mount(
        _ context: DialectContext, on router: Router<HeraldRequestContext>, table: inout RouteTable
    ) throws {
        try Self(context: context, settings: context.settings.settings(of: Self.self))
            .register(on: router, table: &table)
    }
}

/// Every dialect's settings, per app, as read from the configuration.
public struct DialectSettings: Sendable {
    private var settings: [String: [String: any Sendable]] = [:]

    /// No settings: every dialect gets its defaults.
    public init() {}

    /// Reads the settings of `dialects` for every app of `appIDs`.
    package init(reader: ConfigReader, appIDs: [String], dialects: [any Dialect.Type]) throws {
        for dialect in dialects {
            settings[dialect.settingsKey] = try dialect.readSettings(appIDs: appIDs, reader: reader)
        }
    }

    /// The settings of one dialect, by app.
    package func settings<D: Dialect>(of dialect: D.Type) -> [String: D.Settings] {
        (settings[D.settingsKey] ?? [:]).compactMapValues { $0 as? D.Settings }
    }

    /// Replaces the settings of one dialect (tests, embedding).
    package mutating func replace<D: Dialect>(_ dialect: D.Type, with settings: [String: D.Settings]) {
        self.settings[D.settingsKey] = settings.mapValues { $0 }
    }
}
