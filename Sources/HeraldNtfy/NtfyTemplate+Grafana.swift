extension NtfyTemplate {
    /// ntfy's built-in `grafana` template (its `server/templates/grafana.yml`), for Grafana
    /// alerting's webhook contact point: the title is Grafana's `title` marked by the `status`
    /// (firing, resolved, or another), the message Grafana's `message` cut at 2,000 bytes. A body
    /// without a `message` string fails as ntfy's template does (`40045`).
    struct Grafana: BuiltIn {
        let name = "grafana"

        func message(_ data: NtfyTemplateData) throws(ExecutionError) -> String {
            try data.trunc(".message", 2_000) + "\n"
        }

        func title(_ data: NtfyTemplateData) throws(ExecutionError) -> String {
            if try data.equals(".status", "firing") {
                // 🚨
                return try "\n\u{1F6A8} " + data.default(".title", "Alert firing")
            }
            if try data.equals(".status", "resolved") {
                // ✅
                return try "\n\u{2705} " + data.default(".title", "Alert resolved")
            }
            // ⚠️ (with its emoji variation selector, as ntfy's template has it)
            return try "\n\u{26A0}\u{FE0F} Unknown alert: " + data.default(".title", "Alert")
        }
    }
}
