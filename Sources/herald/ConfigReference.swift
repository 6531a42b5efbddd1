import ArgumentParser
import Foundation
import HeraldServer

/// `herald config reference`: prints the configuration reference, made from the settings the code
/// declares (``SettingsCatalog``); `docs/configuration.md` is its output.
struct ConfigReference: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reference",
        abstract: "Print the configuration reference (Markdown): every setting's key, type, default and meaning.",
        discussion: """
            The reference is made from the settings as the code declares and reads them, so it cannot \
            drift from what herald serve accepts; docs/configuration.md is this output.

            Example:
              \(SettingsCatalog.regenerateCommand)
            """)

    func run() {
        FileHandle.standardOutput.write(Data(SettingsCatalog.reference().utf8))
    }
}
