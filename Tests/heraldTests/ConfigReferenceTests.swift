import Foundation
import Testing

@Suite("herald config reference")
struct ConfigReferenceTests {
    @Test("Prints the committed docs/configuration.md")
    func printsTheCommittedReference() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")
        let committed = try String(contentsOf: file, encoding: .utf8)
        let reference = try HeraldProcess(["config", "reference"])
        #expect(try await reference.exitStatus() == 0)
        // Not #expect(reference.text == committed): that would print both documents whole.
        if reference.text != committed {
            Issue.record(
                "docs/configuration.md is out of date: run `swift run herald config reference > docs/configuration.md`")
        }
    }
}
