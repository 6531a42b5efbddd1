import ArgumentParser
import Foundation
import HeraldCore
import HeraldServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `herald export`: every installation of the store (or of one app) as JSON Lines, one export
/// record per line, tokens still sealed under the master key; `herald import` reads them back into
/// another store with the same key.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export installations as JSON Lines (tokens stay encrypted), for herald import into another store.",
        discussion: """
            Each line is one installation with every field, its preferences and its token still sealed \
            under the master key (never in clear): only a store with the same master key (secret_key, \
            or the same key file) can import it. The file is created with mode 0600.

            Example, moving from SQLite to PostgreSQL (same master key on both sides):
              export HERALD_SECRET_KEY="$(cat herald.sqlite.key)"
              herald export --database sqlite://herald.sqlite > installations.jsonl
              herald import --database postgres://db/herald installations.jsonl
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: [.short, .long], help: "The file to write (created 0600), or - for standard output.")
    var output = "-"
    @Option(help: "Export only this app's installations (default: every app).") var app: String?
    @Option(help: "Installations read from the store per page.") var batch = 1000

    func validate() throws {
        guard (1...PageRequest.maxLimit * 10).contains(batch) else {
            throw ValidationError("--batch must be 1 to \(PageRequest.maxLimit * 10).")
        }
    }

    func run() async throws {
        let configuration = try await common.load()
        let logger = bootstrapLogging(level: configuration.logLevel)
        let store = try await common.openStore(configuration, logger: logger)
        let destination = try Destination(output)
        // Records shown on a terminal would be torn by the progress line.
        var progress = Progress(
            noun: "installations", drawn: !(destination.isStandardOutput && isatty(STDOUT_FILENO) == 1))
        var count = 0
        // Keyset order is (app, id): one app's installations are those after (app, "") up to the next app.
        var cursor = app.map { ExportCursor(appID: $0, id: "") }
        var finished = false
        while !finished {
            let page = try await store.exportInstallations(after: cursor, limit: batch)
            var lines: [UInt8] = []
            for record in page {
                if let app, record.installation.appID != app {
                    finished = true
                    break
                }
                lines += record.json.serialized()
                lines.append(UInt8(ascii: "\n"))
                count += 1
            }
            try destination.handle.write(contentsOf: lines)
            progress.update(count: count)
            guard let last = page.last, page.count == batch else { break }
            cursor = ExportCursor(appID: last.installation.appID, id: last.installation.id)
        }
        try destination.commit()
        progress.finish()
        let summary = "exported \(count) installations in \(Progress.describe(progress.elapsed))"
        // With the records on standard output, the summary goes beside the logs.
        if destination.isStandardOutput {
            FileHandle.standardError.write(Data((summary + "\n").utf8))
        } else {
            say(summary)
        }
    }

    /// Where the lines go: standard output, or a file written under a temporary name (mode 0600: it
    /// holds sealed tokens) and renamed into place once complete, so a failed export leaves no
    /// file that looks whole.
    private struct Destination {
        let handle: FileHandle
        let path: String?
        let partial: String?

        var isStandardOutput: Bool { path == nil }

        init(_ output: String) throws {
            guard output != "-" else {
                handle = FileHandle.standardOutput
                path = nil
                partial = nil
                return
            }
            let partial = output + ".partial"
            let descriptor = open(partial, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            guard descriptor >= 0 else {
                throw ValidationError("Cannot create \(partial): \(String(cString: strerror(errno))).")
            }
            // A file left by an earlier run keeps its mode through O_CREAT: narrow it.
            fchmod(descriptor, 0o600)
            handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
            path = output
            self.partial = partial
        }

        /// Flushes the file and moves it into place.
        func commit() throws {
            guard let path, let partial else { return }
            try handle.synchronize()
            try handle.close()
            guard rename(partial, path) == 0 else {
                throw ValidationError("Cannot rename \(partial) to \(path): \(String(cString: strerror(errno))).")
            }
        }
    }
}
