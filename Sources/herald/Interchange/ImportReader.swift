import Foundation
import HeraldCore

/// One item of an import file: a registration body, an export record, or nothing to store.
enum ImportItem {
    case registration(InstallationRegistration)
    case record(ExportedInstallation)
    /// A header or comment line.
    case skip

    /// A registration body, as `POST /v1/installations` takes it.
    static func register(_ body: JSONValue) throws -> ImportItem {
        .registration(try InstallationRegistration(json: body))
    }
}

/// Reads one file format of `herald import`: each item it finds goes to the sink, numbered and
/// located (`line 12`, `record 3`, `notification 2, token 5`) so a refusal names it.
protocol ImportReader {
    /// Reads every item of `lines` (the file, whose size is `size` when known) into `sink`.
    func read(_ lines: inout LineReader, size: Int64?, into sink: ImportSink) async throws
}

/// Where a reader's items go: parsed at their location, added to the load, counted in the progress.
/// One import's, used by one task.
final class ImportSink {
    private var loader: ImportLoader
    private var progress: Progress

    init(loader: ImportLoader, progress: Progress) {
        self.loader = loader
        self.progress = progress
    }

    /// The word for one item in the loader's messages (`line` by default).
    var unit: String {
        get { loader.unit }
        set { loader.unit = newValue }
    }

    /// Parses one item and adds it to the load; a failure names `location` and stops the import
    /// (the batches before the item are written; its own is not).
    func feed(_ location: String, number: Int, _ parse: () throws -> ImportItem) async throws {
        do {
            let item: ImportItem
            do {
                item = try parse()
            } catch let failure as ImportFailure {
                throw failure
            } catch {
                throw ImportFailure("\(location): \(error)")
            }
            try await loader.add(item, line: number)
        } catch let failure as ImportFailure {
            try await loader.finishWriting()
            progress.finish()
            throw ImportFailure("\(failure); \(loader.counts.total) installations before it were imported")
        }
    }

    /// `done` of `total` (bytes of the file, or items of a document) read so far.
    func update(done: Int64, total: Int64?) {
        progress.update(count: loader.lines, done: done, total: total)
    }

    /// Writes what is left, and returns what the import stored.
    func finishWriting() async throws -> ImportLoader.Counts {
        try await loader.flush()
        try await loader.finishWriting()
        return loader.counts
    }

    /// Ends the progress line, and returns the time the import took.
    func finishProgress() -> Duration {
        progress.finish()
        return progress.elapsed
    }
}

/// `--format jsonl`: registration bodies, or records written by `herald export` whose token opens
/// under this store's key.
struct JSONLinesReader: ImportReader {
    let cipher: TokenCipher

    func read(_ lines: inout LineReader, size: Int64?, into sink: ImportSink) async throws {
        while let line = lines.next() {
            let number = lines.lineNumber
            try await sink.feed("line \(number)", number: number) { try item(line, lineNumber: number) }
            sink.update(done: lines.consumed, total: size)
        }
    }

    /// One line: a registration body, or an export record whose token opens under this store's key.
    private func item(_ line: ArraySlice<UInt8>, lineNumber: Int) throws(ImportFailure) -> ImportItem {
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

/// `--format csv`: a header row of registration fields, then one installation per record
/// (``InstallationCSV``); a quoted cell may hold line breaks.
struct CSVReader: ImportReader {
    func read(_ lines: inout LineReader, size: Int64?, into sink: ImportSink) async throws {
        var header: [String]?
        while let first = lines.next() {
            let number = lines.lineNumber
            var record = String(decoding: first, as: UTF8.self)
            while !InstallationCSV.isComplete(record), let more = lines.next(skippingBlank: false) {
                record += "\n" + String(decoding: more, as: UTF8.self)
            }
            guard let columns = header else {
                do {
                    header = try InstallationCSV.header(record)
                } catch { throw ImportFailure("line \(number): \(error)") }
                continue
            }
            try await sink.feed("line \(number)", number: number) {
                try .register(try InstallationCSV.registrationBody(header: columns, record: record))
            }
            sink.update(done: lines.consumed, total: size)
        }
    }
}

/// A format that is either one JSON document (read whole, its items numbered in it) or one item per
/// line (streamed): a Parse export, a gorush file.
protocol DocumentOrLinesReader: ImportReader {
    /// The file's name, for a document that cannot be read.
    var file: String { get }
    /// Whether the file is one document, by its first line.
    func isDocument(firstLine: ArraySlice<UInt8>) -> Bool
    /// Feeds each item of the whole document.
    func read(document: JSONValue, into sink: ImportSink) async throws
    /// The item of one line.
    func item(line: ArraySlice<UInt8>) throws -> ImportItem
}

extension DocumentOrLinesReader {
    func read(_ lines: inout LineReader, size: Int64?, into sink: ImportSink) async throws {
        guard let first = lines.next() else { return }
        if isDocument(firstLine: first) {
            let document: JSONValue
            do {
                document = try JSONValue.parse(Array(first) + [UInt8(ascii: "\n")] + lines.rest())
            } catch { throw ImportFailure("\(file): \(error)") }
            return try await read(document: document, into: sink)
        }
        var line: ArraySlice<UInt8>? = first
        var number = lines.lineNumber
        while let current = line {
            try await sink.feed("line \(number)", number: number) { try item(line: current) }
            sink.update(done: lines.consumed, total: size)
            line = lines.next()
            number = lines.lineNumber
        }
    }
}

/// `--format parse`: a Parse or LeanCloud `_Installation` export, `{"results": [...]}` or one object
/// per line (``ParseInstallation``).
struct ParseExportReader: DocumentOrLinesReader {
    let file: String

    func isDocument(firstLine: ArraySlice<UInt8>) -> Bool {
        (try? JSONValue.parse(firstLine)).map(ParseInstallation.isDocument)
            ?? (firstLine.first(where: { $0 != 0x20 }) == 0x7B)
    }

    func read(document: JSONValue, into sink: ImportSink) async throws {
        guard case .array(let results)? = document.objectValue?["results"] else {
            throw ImportFailure("\(file): a Parse export is {\"results\": [...]} or one object per line")
        }
        sink.unit = "record"
        for (index, item) in results.enumerated() {
            try await sink.feed("record \(index + 1)", number: index + 1) {
                try .register(try ParseInstallation.registrationBody(item))
            }
            sink.update(done: Int64(index + 1), total: Int64(results.count))
        }
    }

    func item(line: ArraySlice<UInt8>) throws -> ImportItem {
        try .register(try ParseInstallation.registrationBody(try JSONValue.parse(line)))
    }
}

/// `--format gorush`: gorush's request body `{"notifications": [...]}`, or `token,platform` lines
/// (``GorushTokens``).
struct GorushReader: DocumentOrLinesReader {
    let file: String

    func isDocument(firstLine: ArraySlice<UInt8>) -> Bool {
        firstLine.first(where: { $0 != 0x20 && $0 != 0x09 }) == UInt8(ascii: "{")
    }

    func read(document: JSONValue, into sink: ImportSink) async throws {
        guard GorushTokens.isRequest(document), case .array(let notifications)? = document.objectValue?["notifications"]
        else { throw ImportFailure("\(file): a gorush request is {\"notifications\": [...]}") }
        sink.unit = "token"
        var number = 0
        for (index, notification) in notifications.enumerated() {
            let bodies: [JSONValue]
            do {
                bodies = try GorushTokens.registrationBodies(notification: notification, index: index)
            } catch { throw ImportFailure("notification \(index + 1): \(error)") }
            for (position, body) in bodies.enumerated() {
                number += 1
                try await sink.feed("notification \(index + 1), token \(position + 1)", number: number) {
                    try .register(body)
                }
            }
            sink.update(done: Int64(index + 1), total: Int64(notifications.count))
        }
    }

    func item(line: ArraySlice<UInt8>) throws -> ImportItem {
        guard let body = try GorushTokens.registrationBody(line: String(decoding: line, as: UTF8.self)) else {
            return .skip
        }
        return try .register(body)
    }
}
