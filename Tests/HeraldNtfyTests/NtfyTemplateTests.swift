import Foundation
import HTTPTypes
import HeraldCore
import HeraldProviderMocks
import HeraldServerTestSupport
import HeraldTestSupport
import Testing

@testable import HeraldNtfy

@Suite("ntfy message templates (X-Template, Template, Tpl, ?template=, ?tpl=)")
struct NtfyTemplateTests {
    /// A webhook-style publish to `/alerts`: the body as the tool posts it, the template in `query`.
    static func post(
        _ api: API, _ query: String, body: String, headers: HTTPFields = [:]
    ) async throws -> CallResponse {
        try await api.call(
            .post, query.isEmpty ? "/alerts" : "/alerts?\(query)", bearer: ServerHarness.publishKey, body: body,
            contentType: "application/json",
            headers: headers)
    }

    /// A member of a fixture, decoded.
    static func member(_ fixture: String, _ path: String) throws -> String {
        var value: JSONValue? = try JSONValue.parse(Array(fixture.utf8))
        for name in path.split(separator: ".") { value = value?.objectValue?[String(name)] }
        return try #require(value?.stringValue)
    }

    /// A topic-form publish read as the route reads it (header fields and query parameters by name).
    static func message(_ body: String, _ parameters: [String: String]) throws(NtfyError) -> NtfyMessage {
        try NtfyMessage(topic: "alerts", body: Array(body.utf8), parameter: { parameters[$0] }, now: NtfyTests.now)
    }

    @Test(
        "ntfy's own webhook fixtures through the route: github (star, watch, comment, issue, pull request), grafana and alertmanager reach the device with the title and message ntfy's templates write"
    )
    func builtInTemplates() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            let phone = Fixtures.apnsToken()
            _ = try await api.call(
                .post, "/v1/installations", body: #"{"platform":"ios","token":"\#(phone)","channels":["alerts"]}"#)
            let issueBody = try Self.member(NtfyWebhookFixtures.githubIssueOpened, "issue.body")
            let commentBody = try Self.member(NtfyWebhookFixtures.githubIssueCommentCreated, "comment.body")
            let cases: [(query: String, header: HTTPFields, body: String, title: String, message: String)] = [
                (
                    "template=github", [:], NtfyWebhookFixtures.githubStarCreated, "\u{2B50} mbilby starred ntfy",
                    "Stargazer: https://github.com/mbilby\nRepository: https://github.com/binwiederhier/ntfy"
                ),
                (
                    "tpl=github", [:], NtfyWebhookFixtures.githubWatchStarted, "\u{1F440} mbilby started watching ntfy",
                    "Watcher: https://github.com/mbilby\nRepository: https://github.com/binwiederhier/ntfy"
                ),
                // ntfy's TestServer_MessageTemplate_FromNamedTemplate_GitHubCommentCreated.
                (
                    "", [HTTPField.Name("X-Template")!: "github"], NtfyWebhookFixtures.githubIssueCommentCreated,
                    "\u{1F4AC} New comment on issue #1389 instant alerts without Pull to refresh",
                    [
                        "Commenter: https://github.com/wunter8", "Repository: https://github.com/binwiederhier/ntfy",
                        "Comment link: https://github.com/binwiederhier/ntfy/issues/1389#issuecomment-3078214289", "",
                        "Comment:", commentBody,
                    ].joined(separator: "\n")
                ),
                // ntfy's TestServer_MessageTemplate_FromNamedTemplate_GitHubIssueOpened: a space after each label.
                (
                    "", [HTTPField.Name("Template")!: "github"], NtfyWebhookFixtures.githubIssueOpened,
                    "\u{1F41B} Issue opened: #1391 http 500 error (ntfy error 50001)",
                    [
                        "Opened by: https://github.com/TheUser-dev",
                        "Repository: https://github.com/binwiederhier/ntfy",
                        "Issue link: https://github.com/binwiederhier/ntfy/issues/1391", "Labels: \u{1FAB2} bug ", "",
                        "Description:", issueBody.trimmingCharacters(in: .newlines),
                    ].joined(separator: "\n")
                ),
                (
                    "", [HTTPField.Name("Tpl")!: "github"], NtfyWebhookFixtures.githubPullRequestOpened,
                    "\u{1F500} Pull request opened: #1390 WIP Template dir",
                    [
                        "Branch: template-dir \u{2192} main", "Opened by: https://github.com/binwiederhier",
                        "Repository: https://github.com/binwiederhier/ntfy",
                        "Pull request: https://github.com/binwiederhier/ntfy/pull/1390",
                    ].joined(separator: "\n")
                ),
                (
                    "template=grafana", [:], NtfyWebhookFixtures.grafanaResolved,
                    "\u{2705} [RESOLVED] Load avg 15m too high Node alerts (10.108.0.2:9100 node-exporter)",
                    "**Resolved**\n\nValue: B=18.98211314475876, C=0\nLabels:\n - alertname = Load avg 15m too high\n"
                        + " - grafana_folder = Node alerts\n - instance = 10.108.0.2:9100\n - job = node-exporter"
                ),
                // No "Ends at" for the zero time, and the template's blank line before "Summary".
                (
                    "template=alertmanager", [:], NtfyWebhookFixtures.alertmanagerFiring,
                    "\u{1F6A8} Alert: HighCPUUsage",
                    "Status: Firing\nReceiver: webhook-receiver\nAlert: HighCPUUsage\nInstance: server01\n"
                        + "Severity: critical\nStarts at: 2025-07-17T07:00:00Z\n\nSummary: High CPU usage detected\n"
                        + "Source: http://prometheus.local/graph?g0.expr=..."
                ),
            ]
            for (query, header, body, title, message) in cases {
                let sent = try await Self.post(api, query, body: body, headers: header)
                #expect(sent.status == .ok, "\(query) \(header): \(String(describing: sent.json))")
                #expect(sent["event"] == .string("message"))
                #expect(sent["title"] == .string(title))
                #expect(sent["message"] == .string(message))
                _ = try await harness.drain()
                let alert = try #require(harness.apns.requests.last)
                #expect(alert.token == phone)
                #expect(alert.json?["aps"]?["alert"]?["title"] == .string(title), "\(title)")
                #expect(alert.json?["aps"]?["alert"]?["body"] == .string(message), "\(title)")
            }
            #expect(harness.apns.requests.count == cases.count)
        }
    }

    @Test(
        "Refused with ntfy's error body, nothing delivered: ntfy's inline template example (40043), a template Herald does not have (40047), an event github does not handle (40045), a body that is not JSON (40042)"
    )
    func refusals() async throws {
        let harness = try await EngineHarness()
        try await harness.run { api in
            _ = try await api.call(
                .post, "/v1/installations",
                body: #"{"platform":"ios","token":"\#(Fixtures.apnsToken())","channels":["alerts"]}"#)
            let link = JSONValue.string("https://ntfy.sh/docs/publish/#message-templating")

            // ntfy's documented inline example (curl --globoff … 'ntfy.sh/mytopic?tpl=yes&t={{.hostname}}…').
            func encoded(_ text: String) -> String {
                text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
            }
            let inline = try await Self.post(
                api,
                "tpl=yes&t=\(encoded("{{.hostname}}: A {{.error.level}} error has occurred"))"
                    + "&m=\(encoded("Error message: {{.error.desc}}"))"
                    + "&p=\(encoded(#"{{if eq .error.level "severe"}}5{{else}}3{{end}}"#))",
                body: #"{"hostname": "phil-pc", "error": {"level": "severe", "desc": "Disk has run out of space"}}"#)
            #expect(inline.status == .badRequest)
            #expect(inline["code"] == .number(40043))
            #expect(inline["http"] == .number(400))
            #expect(inline.string("error")?.hasPrefix("invalid request: could not parse template; ") == true)
            #expect(inline.string("error")?.contains("Herald does not run Go templates") == true)
            #expect(inline["link"] == link)
            #expect(inline.headers[.contentType] == "application/json")

            let unknown = try await Self.post(api, "template=gitlab", body: NtfyWebhookFixtures.githubIssueOpened)
            #expect(unknown.status == .badRequest)
            #expect(unknown["code"] == .number(40047))
            #expect(unknown.string("error")?.hasPrefix("invalid request: template file not found") == true)
            #expect(unknown["link"] == link)

            // A push (GitHub's `push` event has no action): ntfy's template fails on its line 36.
            let push = try await Self.post(
                api, "template=github",
                body: #"{"ref":"refs/heads/main","repository":{"name":"ntfy"},"sender":{"login":"binwiederhier"}}"#)
            #expect(push.status == .badRequest)
            #expect(push["code"] == .number(40045))
            #expect(
                push.string("error")
                    == "invalid request: template execution failed; template github (message): template: :36:3: "
                    + #"executing "" at <fail "Unsupported GitHub event type or action.">: error calling fail: "#
                    + "Unsupported GitHub event type or action.")

            let notJSON = try await Self.post(api, "template=grafana", body: "Disk full")
            #expect(notJSON.status == .badRequest)
            #expect(notJSON["code"] == .number(40042))
            #expect(notJSON.string("error") == "invalid request: message body must be JSON if templating is enabled")

            _ = try await harness.drain()
            #expect(harness.apns.requests.isEmpty)
            #expect(harness.fcm.requests.isEmpty)
        }
    }

    @Test("The template parameter as ntfy reads it: a boolean word is inline mode, anything else a name")
    func selection() {
        for inline in ["yes", "1", "true", "no", "0", "false", " yes "] { #expect(NtfyTemplate(inline) == .inline) }
        #expect(NtfyTemplate("github") == .named("github"))
        #expect(NtfyTemplate("YES") == .named("YES"), "ntfy's boolean words are lower-case")
        #expect(NtfyTemplate(nil) == nil)
        #expect(NtfyTemplate("") == nil)
    }

    @Test("Inline mode without {{ }} publishes the title and message as ntfy does; its errors and limits")
    func inlineAndLimits() throws {
        // Text with no action is the text: a literal \n is a line break, the ends trimmed.
        let plain = try Self.message(
            #"{"disk":"sda"}"#, ["x-template": "yes", "x-title": " Disk full ", "message": #"on\nphil-pc"#, "p": "4"])
        #expect(plain.title == "Disk full")
        #expect(plain.message == "on\nphil-pc")
        #expect(plain.priority == 4)
        #expect(try Self.message(#"{}"#, ["tpl": "1"]).message == "triggered")
        for (body, parameters, code) in [
            ("not json", ["tpl": "yes"], 40042),
            ("{}", ["tpl": "yes", "p": "{{.p}}"], 40043),
            ("{}", ["tpl": "yes", "t": "{{.t}}", "p": "9"], 40007),
            ("{}", ["tpl": "mine"], 40047),
            (
                #"{"status":"firing","title":"\#(String(repeating: "x", count: 4_097))","message":"m"}"#,
                ["tpl": "grafana"], 40041
            ),
            (#"{"status":"firing"}"#, ["tpl": "grafana"], 40045),
            (String(repeating: " ", count: NtfyTemplate.maxBodyBytes + 1), ["tpl": "grafana"], 41303),
        ] as [(String, [String: String], Int)] {
            do {
                _ = try Self.message(body, parameters)
                Issue.record("accepted \(parameters)")
            } catch {
                #expect(error.code == code, "\(parameters): \(error.error)")
            }
        }
        // A templated body may be larger than a message (ntfy's JSON limit).
        let large = #"{"status":"firing","title":"Big","message":"\#(String(repeating: "y", count: 5_000))"}"#
        #expect(try Self.message(large, ["tpl": "grafana"]).message.utf8.count == 2_000)
    }

    @Test("Go's template semantics the renderers keep: missing keys, numbers, title, trunc, range, first")
    func goSemantics() throws {
        // Grafana: an unknown status, no title; Alertmanager: resolved with endsAt, a missing label.
        let grafana = try Self.message(#"{"status":"pending","message":"  m  "}"#, ["tpl": "grafana"])
        #expect(grafana.title == "\u{26A0}\u{FE0F} Unknown alert: Alert")
        #expect(grafana.message == "m")
        let alerts = try Self.message(
            #"""
            {"status":"resolved","receiver":"ops","alerts":[
              {"labels":{"alertname":"Disk","severity":"warning"},"annotations":{"description":"sda full"},
               "startsAt":"2025-07-17T07:00:00Z","endsAt":"2025-07-17T08:00:00Z","generatorURL":"http://p/1"},
              {"labels":{"alertname":"Load","instance":"db1"},"startsAt":"t","generatorURL":"http://p/2"}]}
            """#, ["tpl": "alertmanager"])
        #expect(alerts.title == "\u{2705} Resolved: Disk")
        #expect(
            alerts.message
                == "Status: Resolved\nReceiver: ops\nAlert: Disk\nInstance: <no value>\nSeverity: warning\n"
                + "Starts at: 2025-07-17T07:00:00Z\nEnds at: 2025-07-17T08:00:00Z\nDescription: sda full\n"
                + "Source: http://p/1\n\n\nAlert: Load\nInstance: db1\nSeverity: <no value>\nStarts at: t\n\n"
                + "Source: http://p/2")
        #expect(
            throws: NtfyError.templateExecutionFailed(
                "template alertmanager (title): template: :6:3: executing \"\" at "
                    + "<fail \"Unsupported Alertmanager status.\">: error calling fail: Unsupported Alertmanager status."
            )
        ) { try Self.message(#"{"status":"pending","alerts":[]}"#, ["tpl": "alertmanager"]) }

        // GitHub: numbers as Go prints a float64, the action title-cased, a body cut at 2,000 bytes
        // inside a character (each byte left of it one U+FFFD, as ntfy's JSON writes them).
        let body = String(repeating: "a", count: 1_998) + "\u{1FAB2}"
        let issue = try Self.message(
            #"{"action":"ready_for_review","issue":{"number":1234567,"title":"T","body":"\#(body)"},"repository":{}}"#,
            ["tpl": "github"])
        #expect(issue.title == "\u{1F41B} Issue ready_for_review: #1.234567e+06 T")
        #expect(issue.message.hasPrefix("Ready_for_review by: <no value>\nRepository: <no value>\n"))
        #expect(issue.message.hasSuffix("\nDescription:\n" + String(repeating: "a", count: 1_998) + "\u{FFFD}\u{FFFD}"))
        for (number, text) in [
            (1391.0, "1391"), (123_456, "123456"), (1e6, "1e+06"), (0.0001, "0.0001"), (0.00001, "1e-05"),
            (18.98211314475876, "18.98211314475876"), (-2.5, "-2.5"), (1e21, "1e+21"), (0, "0"),
        ] {
            #expect(NtfyTemplateData.goFloat(number) == text)
        }
        #expect(
            NtfyTemplateData.format(.object(["b": .array([.null, .bool(true)]), "a": .number(1)]))
                == "map[a:1 b:[<nil> true]]")
        // A null where the template reads a field of it fails, as Go's nil pointer does.
        #expect(throws: NtfyError.self) {
            try Self.message(#"{"action":"opened","issue":{"user":null}}"#, ["tpl": "github"])
        }
    }
}
