extension NtfyTemplate {
    /// ntfy's built-in `alertmanager` template (its `server/templates/alertmanager.yml`), for
    /// Prometheus Alertmanager's `webhook_config`: the title names the first alert, the message
    /// lists every alert (labels `alertname`, `instance`, `severity`, its times, the `summary` and
    /// `description` annotations, the generator URL). A status other than `firing` or `resolved`
    /// fails as ntfy's template fails: "Unsupported Alertmanager status." (`40045`).
    struct Alertmanager: BuiltIn {
        let name = "alertmanager"

        /// Alertmanager's `endsAt` of an alert still firing (Go's zero time).
        static let zeroTime = "0001-01-01T00:00:00Z"

        func message(_ data: NtfyTemplateData) throws(ExecutionError) -> String {
            var out = try "Status: \(data.title(".status"))\nReceiver: \(data.text(".receiver"))"
            for alert in try data.range(".alerts") {
                out += try "\nAlert: \(alert.text(".labels.alertname"))"
                out += try "\nInstance: \(alert.text(".labels.instance"))"
                out += try "\nSeverity: \(alert.text(".labels.severity"))"
                out += try "\nStarts at: \(alert.text(".startsAt"))\n"
                // No line break before "Ends at", and none after it: the template's own spacing.
                if try alert.isTrue(".endsAt"), try !alert.equals(".endsAt", Self.zeroTime) {
                    out += try "Ends at: \(alert.text(".endsAt"))"
                }
                if try alert.isTrue(".annotations.summary") {
                    out += try "\nSummary: \(alert.text(".annotations.summary"))"
                }
                if try alert.isTrue(".annotations.description") {
                    out += try "\nDescription: \(alert.text(".annotations.description"))"
                }
                out += try "\nSource: \(alert.text(".generatorURL"))\n\n"
            }
            return out + "\n"
        }

        func title(_ data: NtfyTemplateData) throws(ExecutionError) -> String {
            if try data.equals(".status", "firing") {
                // 🚨
                return try "\n\u{1F6A8} Alert: " + data.first(".alerts").text(".labels.alertname")
            }
            if try data.equals(".status", "resolved") {
                // ✅
                return try "\n\u{2705} Resolved: " + data.first(".alerts").text(".labels.alertname")
            }
            throw NtfyTemplateData.fail("Unsupported Alertmanager status.", line: 6, column: 3)
        }
    }
}
