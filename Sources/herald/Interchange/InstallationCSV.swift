import Foundation
import HeraldCore

/// Installations as CSV (RFC 4180), one registration per row: what `herald import --format csv`
/// reads and `herald export --format csv` writes.
///
/// The header row names the columns, any of ``columns`` in any order (`platform` and either
/// `token` or `subscription` are needed by every row). Cells are the registration body's fields
/// (`POST /v1/installations`): `channels` separated by `;`, `attributes` and `subscription` (Web
/// Push) as JSON objects, `badge` an integer; an empty cell is an absent field.
public enum InstallationCSV {
    /// Every column a file may have, in the order export writes them.
    public static let columns = [
        "user_id", "device_id", "platform", "service", "environment", "token", "subscription", "channels", "locale",
        "timezone", "badge", "app_version", "os_version", "device_model", "bundle_id", "attributes",
    ]

    /// Columns whose cells are JSON objects.
    static let objectColumns: Set<String> = ["attributes", "subscription"]

    /// The header row export writes.
    public static var headerLine: String { columns.joined(separator: ",") }

    /// Whether `text` is a whole record: its quotes are balanced (a quoted cell may hold line breaks,
    /// so a record can span several lines).
    public static func isComplete(_ text: some StringProtocol) -> Bool {
        text.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "\"") ? 1 : 0) } % 2 == 0
    }

    /// Splits one record into its cells: `,` separates, `"` quotes (a doubled `""` inside quotes is a
    /// quote), a trailing `\r` is dropped.
    /// - Throws: `HeraldError` `invalid_csv` for text after a closing quote or an unclosed quote.
    public static func cells(_ record: some StringProtocol) throws(HeraldError) -> [String] {
        var text = Substring(record)
        if text.hasSuffix("\r") { text = text.dropLast() }
        var cells: [String] = []
        var cell = ""
        var quoted = false
        var wasQuoted = false
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            if quoted {
                if character == "\"" {
                    if index < text.endIndex, text[index] == "\"" {
                        cell.append("\"")
                        index = text.index(after: index)
                    } else {
                        quoted = false
                    }
                } else {
                    cell.append(character)
                }
            } else if character == "," {
                cells.append(cell)
                cell = ""
                wasQuoted = false
            } else if character == "\"", cell.isEmpty, !wasQuoted {
                quoted = true
                wasQuoted = true
            } else if wasQuoted {
                throw invalid("Text after a closing quote; quote the whole cell and double the quotes inside it.")
            } else {
                cell.append(character)
            }
        }
        guard !quoted else { throw invalid("A quoted cell is not closed.") }
        cells.append(cell)
        return cells
    }

    /// Reads the header row.
    /// - Returns: The column names, in order.
    /// - Throws: `HeraldError` `invalid_csv` for an unknown, repeated or missing (`platform`) column.
    public static func header(_ record: some StringProtocol) throws(HeraldError) -> [String] {
        var names = try cells(record).map { $0.trimmingCharacters(in: .whitespaces) }
        // A file saved by a spreadsheet may start with a byte order mark.
        if let first = names.first, first.hasPrefix("\u{FEFF}") { names[0] = String(first.dropFirst()) }
        var seen: Set<String> = []
        for name in names {
            guard columns.contains(name) else {
                throw invalid("Unknown column '\(name)'; the columns are \(columns.joined(separator: ", ")).")
            }
            guard seen.insert(name).inserted else { throw invalid("Column '\(name)' appears twice.") }
        }
        guard seen.contains("platform") else { throw invalid("The header has no 'platform' column.") }
        return names
    }

    /// One data row as a registration body (`POST /v1/installations`), for
    /// `InstallationRegistration(json:)` to validate.
    /// - Throws: `HeraldError`: `invalid_csv` (cell count), `invalid_value` naming the column
    ///   (`badge` not an integer, `attributes` or `subscription` not a JSON object).
    public static func registrationBody(
        header: [String], record: some StringProtocol
    ) throws(HeraldError)
        -> JSONValue
    {
        let values = try cells(record)
        guard values.count == header.count else {
            throw invalid("The row has \(values.count) cells; the header has \(header.count).")
        }
        var body: [String: JSONValue] = [:]
        for (name, value) in zip(header, values) where !value.isEmpty {
            switch name {
            case "channels":
                body[name] = .array(
                    value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                        .map(JSONValue.string))
            case "badge":
                guard let badge = Int(value.trimmingCharacters(in: .whitespaces)) else {
                    throw .invalidValue(name, "Column 'badge' must be an integer.")
                }
                body[name] = .number(JSONNumber(badge))
            case _ where objectColumns.contains(name):
                guard case .object(let object)? = try? JSONValue.parse(Array(value.utf8)) else {
                    throw .invalidValue(name, "Column '\(name)' must be a JSON object.")
                }
                body[name] = .object(object)
            default:
                body[name] = .string(value)
            }
        }
        return .object(body)
    }

    /// The row of one installation under ``headerLine``, its token given in clear.
    public static func row(_ installation: Installation, token: PushToken) -> String {
        var values: [String: String] = [
            "user_id": installation.userID ?? "", "device_id": installation.deviceID ?? "",
            "platform": installation.platform.rawValue, "service": installation.service.rawValue,
            "environment": installation.environment.rawValue, "channels": installation.channels.joined(separator: ";"),
            "locale": installation.locale ?? "", "timezone": installation.timezone ?? "",
            "badge": String(installation.badge), "app_version": installation.appVersion ?? "",
            "os_version": installation.osVersion ?? "", "device_model": installation.deviceModel ?? "",
            "bundle_id": installation.bundleID ?? "",
            "attributes": installation.attributes.isEmpty
                ? "" : String(decoding: JSONValue.object(installation.attributes).serialized(), as: UTF8.self),
        ]
        switch token {
        case .device(let device): values["token"] = device
        case .webPush: values["subscription"] = String(decoding: token.storageBytes, as: UTF8.self)
        }
        return columns.map { quote(values[$0] ?? "") }.joined(separator: ",")
    }

    /// A cell as CSV writes it: quoted when it holds a separator, a quote, a line break or edge spaces.
    static func quote(_ value: String) -> String {
        let special = value.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
        guard special || value.hasPrefix(" ") || value.hasSuffix(" ") else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func invalid(_ message: String) -> HeraldError {
        .init(kind: .badRequest, code: "invalid_csv", message: message)
    }
}
