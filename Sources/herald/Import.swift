import ArgumentParser
import Foundation
import HeraldCore
import HeraldServer

/// `herald import`: bulk-loads installations from JSON Lines, many per transaction. A line is either
/// a registration body (as `POST /v1/installations` takes it) or an export record written by
/// `herald export` (ids, state, preferences and the sealed token kept); both may mix in one file.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Bulk-import installations from JSON Lines: registration bodies or herald export records (- for stdin).",
        discussion: """
            A line is either a registration body, as POST /v1/installations takes it (registered in the \
            app given by --app, as the API would), or a record written by herald export (recognised by \
            its "format" member: stored as it was, with its id, state, preferences and sealed token, in \
            its own app). Export records import only into a store with the same master key as the one \
            they came from (secret_key, or the same key file).

            A bad line stops the import with its line number; its batch is not written (earlier batches \
            are). Importing the same export again replaces each installation by itself.

            Examples:
              herald import --app shop devices.jsonl
              herald export --database sqlite://a.sqlite | herald import --database sqlite://b.sqlite -
            """)

    @OptionGroup var common: CommonOptions

    @Argument(help: "The JSON Lines file, or - for standard input.") var file: String
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
        let size = Self.size(of: handle)
        var consumed: Int64 = 0
        var lineNumber = 0
        var buffer: [UInt8] = []
        var finished = false
        while !finished {
            // Read a chunk at a time, so a million-line file never sits in memory whole.
            let chunk = handle.readData(ofLength: 1 << 20)
            finished = chunk.isEmpty
            buffer.append(contentsOf: chunk)
            var start = 0
            while let end = buffer[start...].firstIndex(of: UInt8(ascii: "\n"))
                ?? (finished && start < buffer.count ? buffer.count : nil)
            {
                lineNumber += 1
                let line = buffer[start..<end]
                consumed += Int64(min(end + 1, buffer.count) - start)
                start = min(end + 1, buffer.count)
                guard !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) else { continue }
                do {
                    try await loader.add(try Self.parse(line, lineNumber: lineNumber, cipher: cipher), line: lineNumber)
                } catch let failure as ImportFailure {
                    // The batches before this line are written; this one is not.
                    try await loader.finishWriting()
                    progress.finish()
                    throw ImportFailure("\(failure); \(loader.counts.total) installations before it were imported")
                }
                progress.update(count: loader.lines, done: consumed, total: size)
            }
            buffer.removeFirst(start)
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

    /// The bytes left to read when the input is seekable (a file, or a file redirected to stdin);
    /// nil for a pipe.
    private static func size(of handle: FileHandle) -> Int64? {
        guard let start = try? handle.offset(), let end = try? handle.seekToEnd(),
            (try? handle.seek(toOffset: start)) != nil
        else { return nil }
        return Int64(end - start)
    }
}

/// One line of an import file.
private enum Line {
    case registration(InstallationRegistration)
    case record(ExportedInstallation)
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
    private(set) var counts = Counts()
    /// Lines handed to the store so far.
    private(set) var lines = 0
    private var registrations: [InstallationRegistration] = []
    private var records: [ExportedInstallation] = []
    private var firstLine = 0
    private var lastLine = 0
    private var writing: Task<Counts, any Error>?

    init(store: any HeraldStore, app: String, batch: Int) {
        self.store = store
        self.app = app
        self.batch = batch
    }

    /// Adds a line; a full batch, or a line of the other kind, sends the pending batch to the store.
    mutating func add(_ line: Line, line number: Int) async throws {
        switch line {
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
        let range = firstLine == lastLine ? "line \(firstLine)" : "lines \(firstLine)–\(lastLine)"
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
