import Foundation
import HeraldTestSupport
import Testing

@Suite("herald config reference")
struct ConfigReferenceTests {
    @Test("Prints the committed docs/configuration.md")
    func printsTheCommittedReference() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")
        let committed = try String(contentsOf: file, encoding: .utf8)
        // Output to a file (ScriptProcess), not a pipe: the whole document, however loaded the machine.
        let (status, output, errors) = try await ScriptProcess.run([
            HeraldProcess.executable.path, "config", "reference",
        ])
        #expect(status == 0, "\(errors)")
        // Not #expect(output == committed): that would print both documents whole.
        if output != committed {
            Issue.record(
                "docs/configuration.md is out of date: run `swift run herald config reference > docs/configuration.md`")
        }
    }
}
