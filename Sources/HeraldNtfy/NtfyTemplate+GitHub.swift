extension NtfyTemplate {
    /// ntfy's built-in `github` template (its `server/templates/github.yml`), for a repository's
    /// webhooks: a new star (`star`, `created`), a new watcher (`watch`, `started`), a comment
    /// (`issue_comment`, `created`), any pull request action, any issue action, tested in that
    /// order. Any other event (a push, a release, a ping…) fails as ntfy's template fails:
    /// "Unsupported GitHub event type or action." (`40045`).
    struct GitHub: BuiltIn {
        let name = "github"

        func message(_ data: NtfyTemplateData) throws(ExecutionError) -> String {
            if try data.isTrue(".starred_at"), try data.equals(".action", "created") {
                return try "\nStargazer: \(data.text(".sender.html_url"))"
                    + "\nRepository: \(data.text(".repository.html_url"))"
            }
            if try data.isTrue(".repository"), try data.equals(".action", "started") {
                return try "\nWatcher: \(data.text(".sender.html_url"))"
                    + "\nRepository: \(data.text(".repository.html_url"))"
            }
            if try data.isTrue(".comment"), try data.equals(".action", "created") {
                var out = try "\nCommenter: \(data.text(".comment.user.html_url"))"
                out += try "\nRepository: \(data.text(".repository.html_url"))"
                out += try "\nComment link: \(data.text(".comment.html_url"))\n"
                if try data.isTrue(".comment.body") { out += try "\nComment:\n" + data.trunc(".comment.body", 2_000) }
                return out
            }
            if try data.isTrue(".pull_request") {
                var out = try "\nBranch: \(data.text(".pull_request.head.ref")) \u{2192} "
                out += try data.text(".pull_request.base.ref")
                out += try "\n\(data.title(".action")) by: \(data.text(".pull_request.user.html_url"))"
                out += try "\nRepository: \(data.text(".repository.html_url"))"
                out += try "\nPull request: \(data.text(".pull_request.html_url"))\n"
                if try data.isTrue(".pull_request.body") {
                    out += try "\nDescription:\n" + data.trunc(".pull_request.body", 2_000)
                }
                return out
            }
            if try data.isTrue(".issue") {
                var out = try "\n\(data.title(".action")) by: \(data.text(".issue.user.html_url"))"
                out += try "\nRepository: \(data.text(".repository.html_url"))"
                out += try "\nIssue link: \(data.text(".issue.html_url"))\n"
                // `Labels: {{ range .issue.labels }}{{ .name }} {{ end }}`: a space after each name.
                if try data.isTrue(".issue.labels") {
                    out += "Labels: "
                    for label in try data.range(".issue.labels") { out += try label.text(".name") + " " }
                }
                out += "\n"
                if try data.isTrue(".issue.body") { out += try "\nDescription:\n" + data.trunc(".issue.body", 2_000) }
                return out
            }
            throw NtfyTemplateData.fail("Unsupported GitHub event type or action.", line: 36, column: 3)
        }

        func title(_ data: NtfyTemplateData) throws(ExecutionError) -> String {
            if try data.isTrue(".starred_at"), try data.equals(".action", "created") {
                // ⭐
                return try "\n\u{2B50} \(data.text(".sender.login")) starred \(data.text(".repository.name"))"
            }
            if try data.isTrue(".repository"), try data.equals(".action", "started") {
                // 👀
                return try "\n\u{1F440} \(data.text(".sender.login")) started watching \(data.text(".repository.name"))"
            }
            if try data.isTrue(".comment"), try data.equals(".action", "created") {
                // 💬
                return try
                    "\n\u{1F4AC} New comment on issue #\(data.text(".issue.number")) \(data.text(".issue.title"))"
            }
            if try data.isTrue(".pull_request") {
                // 🔀
                return try "\n\u{1F500} Pull request \(data.text(".action")): "
                    + "#\(data.text(".pull_request.number")) \(data.text(".pull_request.title"))"
            }
            if try data.isTrue(".issue") {
                // 🐛
                return try "\n\u{1F41B} Issue \(data.text(".action")): "
                    + "#\(data.text(".issue.number")) \(data.text(".issue.title"))"
            }
            throw NtfyTemplateData.fail("Unsupported GitHub event type or action.", line: 17, column: 3)
        }
    }
}
