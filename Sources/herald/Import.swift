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
        var loader = Loader(store: store, app: app, batch: max(1, batch))
        var progress = Progress(noun: "installations")
        let size = LineReader.size(of: handle)
        var reader = LineReader(handle)

        /// Parses one item and hands it to the loader; a failure names `location` and stops the import.
        func feed(_ location: String, number: Int, _ parse: () throws -> Line) async throws {
            do {
                let line: Line
                do {
                    line = try parse()
                } catch let failure as ImportFailure {
                    throw failure
                } catch {
                    throw ImportFailure("\(location): \(error)")
                }
                try await loader.add(line, line: number)
            } catch let failure as ImportFailure {
                // The batches before this item are written; this one is not.
                try await loader.finishWriting()
                progress.finish()
                throw ImportFailure("\(failure); \(loader.counts.total) installations before it were imported")
            }
        }
        func register(_ body: JSONValue) throws -> Line { .registration(try InstallationRegistration(json: body)) }

        switch format {
        case .jsonl:
            while let line = reader.next() {
                let number = reader.lineNumber
                try await feed("line \(number)", number: number) {
                    try Self.parse(line, lineNumber: number, cipher: cipher)
                }
                progress.update(count: loader.lines, done: reader.consumed, total: size)
            }
        case .csv:
            var header: [String]?
            while let first = reader.next() {
                let number = reader.lineNumber
                var record = String(decoding: first, as: UTF8.self)
                // A quoted cell may hold line breaks.
                while !InstallationCSV.isComplete(record), let more = reader.next(skippingBlank: false) {
                    record += "\n" + String(decoding: more, as: UTF8.self)
                }
                guard let columns = header else {
                    do {
                        header = try InstallationCSV.header(record)
                    } catch { throw ImportFailure("line \(number): \(error)") }
                    continue
                }
                try await feed("line \(number)", number: number) {
                    try register(try InstallationCSV.registrationBody(header: columns, record: record))
                }
                progress.update(count: loader.lines, done: reader.consumed, total: size)
            }
        case .parse, .gorush:
            guard let first = reader.next() else { break }
            let firstNumber = reader.lineNumber
            let firstValue = try? JSONValue.parse(first)
            let isDocument =
                format == .parse
                ? (firstValue.map(ParseInstallation.isDocument) ?? (first.first(where: { $0 != 0x20 }) == 0x7B))
                : first.first(where: { $0 != 0x20 && $0 != 0x09 }) == UInt8(ascii: "{")
            if isDocument {
                // A whole JSON document: read at once (one object per line streams instead).
                let document: JSONValue
                do {
                    document = try JSONValue.parse(Array(first) + [UInt8(ascii: "\n")] + reader.rest())
                } catch { throw ImportFailure("\(file): \(error)") }
                loader.unit = format == .parse ? "record" : "token"
                try await importDocument(document, feed: feed) { done, total in
                    progress.update(count: loader.lines, done: done, total: total)
                }
            } else {
                var line: ArraySlice<UInt8>? = first
                var number = firstNumber
                while let current = line {
                    try await feed("line \(number)", number: number) {
                        if format == .parse {
                            return try register(try ParseInstallation.registrationBody(try JSONValue.parse(current)))
                        }
                        guard
                            let body = try GorushTokens.registrationBody(line: String(decoding: current, as: UTF8.self))
                        else { return .skip }
                        return try register(body)
                    }
                    progress.update(count: loader.lines, done: reader.consumed, total: size)
                    line = reader.next()
                    number = reader.lineNumber
                }
            }
        }
        try await loader.flush()
        try await loader.finishWriting()
        // The store tidies up after the load now, not in the next writer's work (WAL, vacuum, statistics).
        if let store = store as? any BulkLoading { try await store.finishBulkLoad() }
        progress.finish()
        let counts = loader.counts
        say(
            "imported \(counts.total) installations (\(counts.created) created, "
                + "\(counts.updated) updated, \(counts.restored) restored) in \(Progress.describe(progress.elapsed))")
    }

    /// Feeds each installation of a whole Parse export (`{"results": [...]}`) or gorush request
    /// (`{"notifications": [...]}`), numbering records (Parse) or tokens (gorush) from 1.
    private func importDocument(
        _ document: JSONValue, feed: (String, Int, () throws -> Line) async throws -> Void,
        update: (_ done: Int64, _ total: Int64) -> Void
    ) async throws {
        func register(_ body: JSONValue) throws -> Line { .registration(try InstallationRegistration(json: body)) }
        if format == .parse {
            guard case .array(let results)? = document.objectValue?["results"] else {
                throw ImportFailure("\(file): a Parse export is {\"results\": [...]} or one object per line")
            }
            for (index, item) in results.enumerated() {
                try await feed("record \(index + 1)", index + 1) {
                    try register(try ParseInstallation.registrationBody(item))
                }
                update(Int64(index + 1), Int64(results.count))
            }
            return
        }
        guard GorushTokens.isRequest(document), case .array(let notifications)? = document.objectValue?["notifications"]
        else { throw ImportFailure("\(file): a gorush request is {\"notifications\": [...]}") }
        var number = 0
        for (index, notification) in notifications.enumerated() {
            let bodies: [JSONValue]
            do {
                bodies = try GorushTokens.registrationBodies(notification: notification, index: index)
            } catch { throw ImportFailure("notification \(index + 1): \(error)") }
            for (position, body) in bodies.enumerated() {
                number += 1
                try await feed("notification \(index + 1), token \(position + 1)", number) { try register(body) }
            }
            update(Int64(index + 1), Int64(notifications.count))
        }
    }

    /// One line read: a registration body, or an export record whose token opens under this store's key.
    private static func parse(
        _ line: ArraySlice<UInt8>, lineNumber: Int, cipher: TokenCipher
    ) throws(ImportFailure) -> Line {
        do {
            let value = try JSONValue.parse(line)
            guard ExportedInstallation.isRecord(value) else {
                return .registration(try InstallationRegistration(json: value))
            }
            let record = try ExportedInstallation(json: value)
            do {
                _ = try cipher.openToken(record.sealedToken.sealed, service: record.installation.service)
            } catch  where error.code == "secret_key_mismatch" {
                throw ImportFailure(
                    "line \(lineNumber): the token was sealed with another master key (configure the source's "
                        + "secret_key, or its key file, to import it)")
            } catch {
                throw ImportFailure(
                    "line \(lineNumber): the sealed token is not a \(record.installation.service.rawValue) token")
            }
            return .record(record)
        } catch let error as HeraldError {
            throw ImportFailure("line \(lineNumber): \(error)")
        } catch let failure as ImportFailure {
            throw failure
        } catch {
            throw ImportFailure("line \(lineNumber): \(error)")
        }
    }
}

/// One line of an import file.
private enum Line {
    case registration(InstallationRegistration)
    case record(ExportedInstallation)
    /// A header or comment line: nothing to store.
    case skip
}

/// An import stopped at a line; the message says which and why, and never carries a token.
struct ImportFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}

/// Gathers lines into batches of one kind, in file order, and writes each batch while the next one
/// is read and parsed.
private struct Loader {
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
    mutating func add(_ line: Line, line number: Int) async throws {
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
