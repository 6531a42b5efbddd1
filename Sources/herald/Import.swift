import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCore
import HeraldServer

/// The file formats `herald import` reads.
enum ImportFormat: String, ExpressibleByArgument, CaseIterable {
    /// JSON Lines: registration bodies and `herald export` records.
    case jsonl
    /// CSV with a header row of registration fields (``InstallationCSV``).
    case csv
    /// Parse / LeanCloud `_Installation` export (``ParseInstallation``).
    case parse
    /// gorush request bodies or `token,platform` lists (``GorushTokens``).
    case gorush
}

/// `herald import`: bulk-loads installations, many per transaction: JSON Lines (registration
/// bodies, as `POST /v1/installations` takes them, or export records written by `herald export`,
/// with ids, state, preferences and the sealed token kept), CSV, a Parse / LeanCloud
/// `_Installation` export, or what a gorush user holds.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bulk-import installations: JSON Lines, CSV, Parse/LeanCloud or gorush files (- for stdin).",
        discussion: """
            --format jsonl (default): a line is either a registration body, as POST /v1/installations \
            takes it (registered in the app given by --app, as the API would), or a record written by \
            herald export (recognised by its "format" member: stored as it was, with its id, state, \
            preferences and sealed token, in its own app). Export records import only into a store with \
            the same master key as the one they came from (secret_key, or the same key file).

            --format csv: a header row naming registration fields (user_id, device_id, platform, service, \
            environment, token, subscription, channels, locale, timezone, badge, app_version, os_version, \
            device_model, bundle_id, attributes), then one installation per row: channels separated by ';', \
            attributes and subscription as JSON objects, an empty cell for an absent field.

            --format parse: a Parse or LeanCloud _Installation export, {"results":[...]} or one object per \
            line. deviceType ios/osx/tvos/watchos with deviceToken become APNs installations (production), \
            android with deviceToken or registrationId FCM ones, android with only installationId a direct \
            (WebSocket) one; installationId is the device id, localeIdentifier, timeZone, appIdentifier, \
            channels, badge, appVersion and the user pointer map to their fields, custom fields to attributes.

            --format gorush: gorush keeps no registry, so what its users hold is its request body \
            {"notifications":[{"tokens":[...],"platform":1|2,"topic":...,"development":true}]} \
            (1: APNs, sandbox when development is true, topic as bundle id; 2: FCM; 3, Huawei, is refused) \
            or a list of token,platform lines (1 or ios, 2 or android).

            Every format but jsonl registers into --app. A bad line or record stops the import with its \
            number; its batch is not written (earlier batches are). Importing the same file again updates \
            each installation in place.

            Examples:
              herald import --app shop devices.jsonl
              herald import --app shop --format parse leancloud-installations.json
              herald export --database sqlite://a.sqlite | herald import --database sqlite://b.sqlite -
            """)

    @OptionGroup var common: CommonOptions

    @Argument(help: "The file, or - for standard input.") var file: String
    @Option(help: "The file's format: \(ImportFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format = ImportFormat.jsonl
    @Option(help: "The app registration bodies belong to (export records carry their own).") var app = "default"
    @Option(help: "Lines per transaction.") var batch = 10000
    @Option(help: "The database page cache for the import, in MiB (random token-index inserts want it large).")
    var cacheMiB = 256

    func run() async throws {
        let configuration = try await common.load()
        let logger = bootstrapLogging(level: configuration.logLevel)
        let store = try await common.openStore(configuration, logger: logger, writerCacheKiB: max(2, cacheMiB) * 1024)
        // The store's own key (openStore has created the key file if there was none): each export
        // record's token is checked against it as its line is read, so a refusal names the line.
        let cipher = try SecretKeyLoader.cipher(for: configuration, logger: logger)
        let handle: FileHandle
        if file == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: file) else { throw ValidationError("Cannot read \(file).") }
            handle = opened
        }
        let sink = ImportSink(
            loader: ImportLoader(store: store, app: app, batch: max(1, batch)),
            progress: Progress(noun: "installations"))
        let size = LineReader.size(of: handle)
        var lines = LineReader(handle)
        try await reader(cipher: cipher).read(&lines, size: size, into: sink)
        let counts = try await sink.finishWriting()
        // The store tidies up after the load now, not in the next writer's work (WAL, vacuum, statistics).
        if let store = store as? any BulkLoading { try await store.finishBulkLoad() }
        let elapsed = sink.finishProgress()
        say(
            "imported \(counts.total) installations (\(counts.created) created, "
                + "\(counts.updated) updated, \(counts.restored) restored) in \(Progress.describe(elapsed))")
    }

    /// The reader of `--format`.
    private func reader(cipher: TokenCipher) -> any ImportReader {
        switch format {
        case .jsonl: JSONLinesReader(cipher: cipher)
        case .csv: CSVReader()
        case .parse: ParseExportReader(file: file)
        case .gorush: GorushReader(file: file)
        }
    }
}

/// An import stopped at a line; the message says which and why, and never carries a token.
struct ImportFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

/// Gathers lines into batches of one kind, in file order, and writes each batch while the next one
/// is read and parsed.
struct ImportLoader {
    struct Counts {
        var created = 0
        var updated = 0
        var restored = 0

        var total: Int { created + updated + restored }
    }

    let store: any HeraldStore
    let app: String
    let batch: Int
    /// What the numbers given to ``add(_:line:)`` count, for messages ("line", "record").
    var unit = "line"
    private(set) var counts = Counts()
    /// Lines handed to the store so far.
    private(set) var lines = 0
    private var registrations: [InstallationRegistration] = []
    private var records: [ExportedInstallation] = []
    private var firstLine = 0
    private var lastLine = 0
    /// The batch being written while the next is parsed. A task of its own because it spans calls
    /// of this value's mutating methods, which a child task cannot; it is awaited
    /// (``finishWriting()``) before the next batch starts, when an item fails and when the import
    /// ends, so no write outlives the command.
    private var writing: Task<Counts, any Error>?

    init(store: any HeraldStore, app: String, batch: Int) {
        self.store = store
        self.app = app
        self.batch = batch
    }

    /// Adds a line; a full batch, or a line of the other kind, sends the pending batch to the store.
    mutating func add(_ line: ImportItem, line number: Int) async throws {
        switch line {
        case .skip: return
        case .registration(let registration):
            if !records.isEmpty { try await flush() }
            registrations.append(registration)
        case .record(let record):
            if !registrations.isEmpty { try await flush() }
            records.append(record)
        }
        if firstLine == 0 { firstLine = number }
        lastLine = number
        lines += 1
        if registrations.count + records.count >= batch { try await flush() }
    }

    /// Waits for the batch being written, then starts writing the pending one.
    mutating func flush() async throws {
        guard !registrations.isEmpty || !records.isEmpty else { return }
        try await finishWriting()
        let (store, app, registrations, records) = (store, app, registrations, records)
        let range = firstLine == lastLine ? "\(unit) \(firstLine)" : "\(unit)s \(firstLine)–\(lastLine)"
        writing = Task {
            do {
                if !registrations.isEmpty {
                    let results = try await store.register(batch: registrations, appID: app, now: Date())
                    let created = results.filter(\.created).count
                    return Counts(created: created, updated: results.count - created)
                }
                return Counts(restored: try await store.importInstallations(records))
            } catch let error as HeraldError where error.code == "secret_key_mismatch" {
                throw ImportFailure("\(range): a token was sealed with another master key")
            } catch {
                throw ImportFailure("\(range): \(error)")
            }
        }
        self.registrations.removeAll(keepingCapacity: true)
        self.records.removeAll(keepingCapacity: true)
        firstLine = 0
    }

    /// Waits for the batch being written, if any, and counts what it stored.
    mutating func finishWriting() async throws {
        guard let task = writing else { return }
        writing = nil
        let written = try await task.value
        counts.created += written.created
        counts.updated += written.updated
        counts.restored += written.restored
    }
}
