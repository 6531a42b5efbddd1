import Foundation
import HeraldAPI
import HeraldCore
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How log lines are written.
public enum LogFormat: String, Sendable {
    /// `2026-11-25T12:00:00.123Z info herald: message key=value …`, for people.
    case text
    /// One JSON object per line (`ts`, `level`, `logger`, `msg` and the metadata), for log pipelines.
    case json
}

/// Herald's swift-log handler: one line per event on standard error, written with one `write(2)`
/// so lines of concurrent tasks never interleave. Hummingbird's per-request id key is written as
/// `request_id`, the key Herald's own lines use.
public struct HeraldLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var logLevel: Logger.Level
    let label: String
    let format: LogFormat
    let output: @Sendable (String) -> Void

    /// A handler writing to standard error.
    public init(label: String, format: LogFormat, level: Logger.Level) {
        self.init(label: label, format: format, level: level) { line in
            var bytes = Array(line.utf8)
            bytes.withUnsafeMutableBytes { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
        }
    }

    /// A handler writing each line (with its newline) to `output` (tests).
    public init(label: String, format: LogFormat, level: Logger.Level, output: @escaping @Sendable (String) -> Void) {
        self.label = label
        self.format = format
        self.logLevel = level
        self.output = output
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        if let id = merged.removeValue(forKey: "hb.request.id") { merged[LogKey.requestID] = id }
        let timestamp = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        switch format {
        case .json:
            var object: [String: JSONValue] = [:]
            for (key, value) in merged { object[key] = Self.json(value) }
            object["ts"] = .string(timestamp)
            object["level"] = .string(event.level.rawValue)
            object["logger"] = .string(label)
            object["msg"] = .string(event.message.description)
            if event.level >= .warning { object["source"] = .string("\(event.file):\(event.line)") }
            output(String(decoding: JSONValue.object(object).serialized(), as: UTF8.self) + "\n")
        case .text:
            let pairs = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            output(
                "\(timestamp) \(event.level.rawValue) \(label): \(event.message)" + (pairs.isEmpty ? "" : " " + pairs)
                    + "\n")
        }
    }

    private static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .stringConvertible(let value): .string(value.description)
        case .array(let values): .array(values.map(json))
        case .dictionary(let members): .object(members.mapValues(json))
        }
    }
}
