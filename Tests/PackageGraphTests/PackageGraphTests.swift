import Foundation
import HeraldTestSupport
import Testing

/// `Package.swift`'s target graph against the module table of docs/architecture.md: every product
/// target is in the table, and depends on no Herald module its row does not list.
@Suite("The package graph follows docs/architecture.md's module table")
struct PackageGraphTests {
    /// The repository's root (this file is `Tests/PackageGraphTests/PackageGraphTests.swift`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Each target's name, kind and the names of the targets of this package it depends on, from
    /// `swift package dump-package` with a scratch path of its own (so it never waits on a build's lock).
    static func targets() async throws -> [(name: String, type: String, dependencies: Set<String>)] {
        let scratch = try TemporaryDirectory()
        defer { scratch.remove() }
        let (status, output, errors) = try await ScriptProcess.run([
            "swift", "package", "--package-path", root.path, "--scratch-path", scratch.path, "dump-package",
        ])
        guard status == 0, let data = output.data(using: .utf8),
            let manifest = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let targets = manifest["targets"] as? [[String: Any]]
        else { throw TestFailure("swift package dump-package failed (\(status)): \(errors)") }
        let names = Set(targets.compactMap { $0["name"] as? String })
        return targets.map { target in
            let dependencies = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                // `byName` or `target`: [name, condition]; a `product` is another package's.
                ((dependency["byName"] ?? dependency["target"]) as? [Any])?.first as? String
            }
            return (
                target["name"] as? String ?? "", target["type"] as? String ?? "",
                Set(dependencies.filter(names.contains))
            )
        }
    }

    /// The module table: each module of a row's first column (its backticked names before any
    /// parenthesis) with the backticked names of its second column.
    static func table() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
        guard let start = text.range(of: "## Modules\n") else { throw TestFailure("no ## Modules section") }
        let section = text[start.upperBound...]
        var rows: [String: Set<String>] = [:]
        var inTable = false
        for line in section.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { break }
            guard line.hasPrefix("|") else {
                if inTable { break }
                continue
            }
            inTable = true
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard cells.count >= 4, !cells[1].contains("---"), cells[1].trimmingCharacters(in: .whitespaces) != "module"
            else { continue }
            let modules = backticked(String(cells[1].prefix { $0 != "(" }))
            let allowed = Set(backticked(cells[2]))
            for module in modules { rows[module] = allowed }
        }
        return rows
    }

    static func backticked(_ text: String) -> [String] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }
            .map { String($0.element) }
    }

    @Test("every target but the tests is in the table, with no dependency the table does not allow")
    func dependenciesFollowTheTable() async throws {
        let table = try Self.table()
        let targets = try await Self.targets()
        #expect(targets.count > 20, "the manifest lists \(targets.count) targets")
        for target in targets where target.type != "test" {
            guard let allowed = table[target.name] else {
                Issue.record("\(target.name) has no row in docs/architecture.md's module table")
                continue
            }
            for dependency in target.dependencies.subtracting(allowed).sorted() {
                Issue.record("\(target.name) depends on \(dependency), which its row does not allow")
            }
        }
        let missing = Set(table.keys).subtracting(targets.map(\.name))
        #expect(missing.isEmpty, "rows for modules the package does not have: \(missing.sorted())")
    }

    @Test("the table reads as it is meant to: the engine on HeraldCore alone, the provider modules below it")
    func tableSaysWhatTheIssueAsked() throws {
        let table = try Self.table()
        #expect(table["HeraldEngine"] == ["HeraldCore"])
        #expect(table["HeraldCore"] == [])
        for provider in ["HeraldAPNs", "HeraldFCM", "HeraldWebPush"] {
            #expect(table[provider] == ["HeraldHTTP2", "HeraldCore"], "\(provider)")
        }
        // No dialect depends on another dialect.
        let dialects: Set = [
            "HeraldAOVIS", "HeraldArgusAI", "HeraldHomeAssistant", "HeraldLeanCloud", "HeraldSNSAPI",
            "HeraldUnifiedPush", "HeraldMatrix", "HeraldNtfy", "HeraldGotify",
        ]
        for dialect in dialects { #expect(table[dialect]?.isDisjoint(with: dialects) == true, "\(dialect)") }
    }
}
