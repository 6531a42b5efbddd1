import Foundation
import HeraldAPI

extension SettingsCatalog {
    /// The command that writes the reference, as the generated file and the test that compares it say.
    public static let regenerateCommand = "swift run herald config reference > docs/configuration.md"

    /// The configuration reference in Markdown (`docs/configuration.md`): how settings are given,
    /// then one table per section of every setting's key, type, default and description.
    public static func reference() -> String {
        var text = """
            # Configuration

            <!-- Generated from the settings declared in the code by `herald config reference`; do not edit.
                 Regenerate with `\(regenerateCommand)`. -->

            Herald reads its settings from, highest priority first: command-line flags (`--host`, `--port`,
            `--database`), `HERALD_*` environment variables, the JSON or YAML configuration file (`--config`
            or `HERALD_CONFIG`; `.yaml` and `.yml` files are YAML, others JSON), and the defaults below.

            - An environment variable is the key upper-cased, with dots and dashes as underscores and `HERALD_`
              in front: `server.port` is `HERALD_SERVER_PORT`, `app.shop.jwt.issuer` is
              `HERALD_APP_SHOP_JWT_ISSUER`. Arrays are comma-separated: `HERALD_APPS=shop,blog`.
            - A key with `<id>` in it is per app: `app.<id>.apns.key_id` is `app.shop.apns.key_id` for the
              app `shop`.
            - A value that is present but malformed stops start-up with an error naming the key; it never
              falls back to the default silently.
            - A configuration file that holds a secret (a setting marked *secret* below) must be readable by
              its owner only: a group- or world-readable one (`chmod 640`, `644`) stops start-up naming the
              secret and the mode; `chmod 600` it, or pass the secrets in the environment.
            - `herald config check` loads the configuration the way `herald serve` does and checks every
              credential file it names.

            Example YAML:

            ```yaml
            server: {host: 0.0.0.0, port: 8080}
            database: sqlite:///var/lib/herald/herald.sqlite
            apps: [shop]
            app:
              shop:
                server_key: hsk_change-me-server
                client_key: hck_change-me-client
                jwt: {hs256_secret: "at-least-32-bytes-of-shared-secret!", issuer: "https://id.shop.example"}
            ```

            """
        for section in sections {
            text += "\n## \(section.title)\n\n"
            if let introduction = section.introduction { text += introduction + "\n\n" }
            text += "| key | type | default | description |\n|---|---|---|---|\n"
            for setting in section.settings {
                let type = setting.type.referenceText + (setting.isSecret ? " (*secret*)" : "")
                let cells = ["`\(setting.key)`", type, setting.defaultText, setting.summary].map(cell)
                text += "| " + cells.joined(separator: " | ") + " |\n"
            }
        }
        return text
    }

    /// `text` as one table cell: on one line, its pipes escaped (GitHub's tables split on them even
    /// inside code spans).
    private static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "|", with: "\\|")
    }
}
