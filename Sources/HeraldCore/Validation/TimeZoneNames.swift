import Foundation

/// The time-zone names Herald accepts: exactly the IANA time-zone database's zone and link names as
/// the system's tzdata lists them — canonical names (`Asia/Kolkata`, `Europe/Kyiv`) and the backward
/// links phones still report (`Asia/Calcutta`, `US/Eastern`, `America/Buenos_Aires`, `Zulu`) — less
/// the ones that are not a place's time: `Factory` and the obsolete `SystemV/*`.
///
/// Foundation's `TimeZone.knownTimeZoneIdentifiers` is not that list on Linux (it leaves out
/// `Asia/Kolkata` and every backward link), and `TimeZone(identifier:)` is not the rule either: it
/// also takes abbreviations (`PST`, `IST`) and offsets (`GMT+5`) that no phone reports as its zone.
/// docs/api.md#time-zones says what is accepted.
public enum TimeZoneNames {
    /// Every accepted name, read once from the system's time-zone database.
    public static let accepted: Set<String> = load()

    /// Where the database is: `TZDIR` when set (as for the C library), else `/usr/share/zoneinfo`.
    static var directory: String {
        ProcessInfo.processInfo.environment["TZDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/share/zoneinfo"
    }

    /// The names of the database in `directory`: from its `tzdata.zi` (the whole database as zic's
    /// input, one `Z` line per zone and one `L` line per link), or, where a system installs only the
    /// compiled files, from the TZif files under it. Without either, Foundation's own list and the
    /// `Etc/` names, so Herald still runs on a host without tzdata. Only names Foundation can compute
    /// with are kept: a name is accepted to be used.
    static func load(directory: String = directory) -> Set<String> {
        var names: Set<String>
        if let text = try? String(contentsOfFile: directory + "/tzdata.zi", encoding: .utf8) {
            names = parse(tzdataZI: text)
        } else {
            names = compiledNames(under: directory)
        }
        if names.isEmpty {
            names = Set(TimeZone.knownTimeZoneIdentifiers).union(["UTC", "GMT"]).union(etcNames)
        }
        return names.filter { isPlace($0) && TimeZone(identifier: $0) != nil }
    }

    /// The zone and link names of a `tzdata.zi` file (zic's input format: a zone is `Z NAME …`, a
    /// link `L TARGET NAME`; every other line is a rule, a continuation or a comment).
    package static func parse(tzdataZI text: String) -> Set<String> {
        var names: Set<String> = []
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            switch fields.first {
            case "Z" where fields.count >= 2: names.insert(String(fields[1]))
            case "L" where fields.count >= 3: names.insert(String(fields[2]))
            default: continue
            }
        }
        return names
    }

    /// Whether a database name is a place's time: not `Factory` (a zone for machines not yet set up)
    /// and not the obsolete `SystemV/*`.
    package static func isPlace(_ name: String) -> Bool {
        name != "Factory" && !name.hasPrefix("SystemV/")
    }

    /// The names of the TZif files under `directory`, without the trees and files that are not zone
    /// names (`posix/` and `right/` repeat the database, `localtime` and `posixrules` are the host's).
    private static func compiledNames(under directory: String) -> Set<String> {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var names: Set<String> = []
        while let path = walker.nextObject() as? String {
            if path.hasPrefix("posix") || path.hasPrefix("right") || path == "localtime" || path == "posixrules" {
                continue
            }
            guard let handle = FileHandle(forReadingAtPath: directory + "/" + path) else { continue }
            defer { try? handle.close() }
            if (try? handle.read(upToCount: 4)) == Data("TZif".utf8) { names.insert(path) }
        }
        return names
    }

    /// The IANA `Etc/` zones (UTC under other names and the fixed offsets), for the fallback list.
    private static let etcNames: Set<String> = Set(
        [
            "Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "Etc/GMT", "Etc/GMT0", "Etc/GMT+0", "Etc/GMT-0",
            "Etc/Greenwich",
        ] + (1...12).map { "Etc/GMT+\($0)" } + (1...14).map { "Etc/GMT-\($0)" })
}
