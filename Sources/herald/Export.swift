import ArgumentParser
import Foundation
import HeraldAPI
import HeraldCore
import HeraldServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file formats `herald export` writes.
enum ExportFormat: String, ExpressibleByArgument, CaseIterable {
    /// JSON Lines of `herald.installation.v1` records, tokens sealed.
    case jsonl
    /// CSV of registration fields, tokens in clear (``InstallationCSV``).
    case csv
    /// A Parse `_Installation` export, `{"results": [...]}`, tokens in clear (``ParseInstallation``).
    case parse
}

/// `herald export`: every installation of the store (or of one app) as JSON Lines, one export
/// record per line, tokens still sealed under the master key, which `herald import` reads back into
/// another store with the same key; or one app's installations as CSV or a Parse `_Installation`
/// export, tokens in clear, for another tool.
struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export installations: JSON Lines (tokens stay encrypted) for herald import, or CSV / Parse.",
        discussion: """
            --format jsonl (default): each line is one installation with every field, its preferences \
            and its token still sealed under the master key (never in clear): only a store with the same \
            master key (secret_key, or the same key file) can import it.

            --format csv and --format parse write one app's installations (--app; default: the only app) \
            with their tokens in clear, for a spreadsheet or another push service: CSV with the columns \
            herald import --format csv reads, or a Parse _Installation export {"results":[...]} (Web Push \
            and SNS installations have no Parse form and are left out, and counted). Ids, state and \
            preferences stay behind.

            The file is created with mode 0600 and appears only once complete.

            Examples:
              herald export --database sqlite://herald.sqlite > installations.jsonl
              herald export --format csv --app shop --output shop.csv
              herald export --format parse --app shop --output _Installation.json
            """)

    @OptionGroup var common: CommonOptions

    @Option(name: [.short, .long], help: "The file to write (created 0600), or - for standard output.")
    var output = "-"
    @Option(help: "The file's format: \(ExportFormat.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format = ExportFormat.jsonl
    @Option(help: "Export only this app's installations (default: every app; csv and parse: the only app).")
    var app: String?
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
        var left = 0
        let app = try format == .jsonl ? app : app ?? Self.onlyApp(configuration)
        let cipher = try format == .jsonl ? nil : SecretKeyLoader.cipher(for: configuration, logger: logger)
        switch format {
        case .jsonl: break
        case .csv: try destination.handle.write(contentsOf: Data((InstallationCSV.headerLine + "\n").utf8))
        case .parse: try destination.handle.write(contentsOf: Data(#"{"results":["#.utf8))
        }
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
                guard let cipher else {
                    lines += record.json.serialized()
                    lines.append(UInt8(ascii: "\n"))
                    count += 1
                    continue
                }
                let token = try cipher.openToken(record.sealedToken.sealed, service: record.installation.service)
                if format == .csv {
                    lines += Array(InstallationCSV.row(record.installation, token: token).utf8)
                    lines.append(UInt8(ascii: "\n"))
                } else if let object = ParseInstallation.object(record.installation, token: token) {
                    if count > 0 { lines.append(UInt8(ascii: ",")) }
                    lines.append(UInt8(ascii: "\n"))
                    lines += object.serialized()
                } else {
                    left += 1
                    continue
                }
                count += 1
            }
            try destination.handle.write(contentsOf: lines)
            progress.update(count: count)
            guard let last = page.last, page.count == batch else { break }
            cursor = ExportCursor(appID: last.installation.appID, id: last.installation.id)
        }
        if format == .parse { try destination.handle.write(contentsOf: Data("\n]}\n".utf8)) }
        try destination.commit()
        progress.finish()
        var summary = "exported \(count) installations in \(Progress.describe(progress.elapsed))"
        if left > 0 { summary += " (\(left) Web Push or SNS installations left out: Parse has no form for them)" }
        // With the records on standard output, the summary goes beside the logs.
        if destination.isStandardOutput {
            FileHandle.standardError.write(Data((summary + "\n").utf8))
        } else {
            say(summary)
        }
    }

    /// The app a one-app format exports when `--app` is not given: the generated `default`, or the
    /// one configured app.
    private static func onlyApp(_ configuration: HeraldConfiguration) throws -> String {
        switch configuration.apps.count {
        case 0: return AppConfiguration.defaultID
        case 1: return configuration.apps[0].id
        default:
            throw ValidationError(
                "--format csv and parse export one app: name it with --app "
                    + "(\(configuration.apps.map(\.id).joined(separator: ", "))).")
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
