import ArgumentParser
import Foundation
import HeraldCore
import HeraldSQLite
import HeraldServer

/// `herald import`: bulk-loads installations from JSON Lines (one registration body per line, as
/// `POST /v1/installations` takes it), many per transaction.
struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bulk-import installations from a JSON Lines file (one registration per line; - for stdin).")

    @OptionGroup var common: CommonOptions

    @Argument(help: "The JSON Lines file, or - for standard input.") var file: String
    @Option(help: "The app the installations belong to.") var app = "default"
    @Option(help: "Registrations per transaction.") var batch = 10000
    @Option(help: "The database page cache for the import, in MiB (random token-index inserts want it large).")
    var cacheMiB = 256

    func run() async throws {
        let configuration = try await common.load()
        let logger = bootstrapLogging(level: configuration.logLevel)
        let store = try await common.openStore(configuration, logger: logger, writerCacheKiB: max(2, cacheMiB) * 1024)
        let handle: FileHandle
        if file == "-" {
            handle = FileHandle.standardInput
        } else {
            guard let opened = FileHandle(forReadingAtPath: file) else { throw ValidationError("Cannot read \(file).") }
            handle = opened
        }
        let started = ContinuousClock.now
        var pending: [InstallationRegistration] = []
        var created = 0
        var updated = 0
        var lineNumber = 0
        // One batch is written while the next one is read and parsed.
        var writing: Task<[RegistrationResult], any Error>?
        func finishWriting() async throws {
            guard let batch = writing else { return }
            writing = nil
            for result in try await batch.value {
                if result.created { created += 1 } else { updated += 1 }
            }
        }
        func flush() async throws {
            guard !pending.isEmpty else { return }
            try await finishWriting()
            let batch = pending
            let app = self.app
            writing = Task { try await store.register(batch: batch, appID: app, now: Date()) }
            pending.removeAll(keepingCapacity: true)
        }
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
                start = min(end + 1, buffer.count)
                guard !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) else { continue }
                do {
                    pending.append(try InstallationRegistration(json: try JSONValue.parse(line)))
                } catch {
                    throw ValidationError("Line \(lineNumber): \(error)")
                }
                if pending.count >= max(1, batch) { try await flush() }
            }
            buffer.removeFirst(start)
        }
        try await flush()
        try await finishWriting()
        // SQLite folds the load's write-ahead log into the database now, not in the next writer's work.
        if let store = store as? SQLiteStore { try await store.finishBulkLoad() }
        let elapsed = ContinuousClock.now - started
        print("imported \(created + updated) installations (\(created) created, \(updated) updated) in \(elapsed)")
    }
}
