import Foundation
import HeraldCore

/// ntfy's message templating (docs/dialects/ntfy.md#templates): with `X-Template` (or `Template`,
/// `Tpl`, `?template=`, `?tpl=`), the body is the JSON another tool posts (a GitHub, Grafana or
/// Alertmanager webhook) and a template turns it into the title and message.
///
/// ntfy's templates are Go templates, which Herald cannot run. Its three built-in templates,
/// `github`, `grafana` and `alertmanager`, are served as fixed renderers (``BuiltIn``) that write
/// what ntfy's `server/templates/*.yml` write; inline templates (`{{…}}` in the title, message or
/// priority) and any other name are refused with ntfy's own errors. A title and message without
/// `{{` are Go templates with nothing to run, so `yes` with them publishes as ntfy does.
package enum NtfyTemplate: Sendable, Equatable {
    /// `yes`, `1` or `true` (and `no`, `0`, `false`, which ntfy reads the same way: any boolean
    /// word selects inline templating): the title, message and priority parameters are templates.
    case inline
    /// A template by name (`github`).
    case named(String)

    /// The largest body a templated publish takes: ntfy's `jsonBodyBytesLimit` (128 KiB), within
    /// `http.max_body_bytes`.
    package static let maxBodyBytes = 131_072

    /// The templates Herald serves, as ntfy names them.
    static let builtIns: [any BuiltIn] = [GitHub(), Grafana(), Alertmanager()]

    /// The template a publish asks for: nil when the parameter is absent or empty (no templating).
    package init?(_ parameter: String?) {
        guard let value = parameter?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        // ntfy's isBoolValue: case-sensitive, and "no" is as much inline mode as "yes".
        self = ["1", "yes", "true", "0", "no", "false"].contains(value) ? .inline : .named(value)
    }

    /// One of ntfy's built-in templates, written in Swift: its `message` and `title` return what
    /// ntfy's Go template writes before ntfy trims it (``output(_:)``).
    protocol BuiltIn: Sendable {
        /// The name a publish gives (`?template=github`).
        var name: String { get }
        /// The template's `message`.
        /// - Throws: ``ExecutionError`` where ntfy's template fails (an event it does not handle).
        func message(_ data: NtfyTemplateData) throws(ExecutionError) -> String
        /// The template's `title`.
        /// - Throws: ``ExecutionError`` where ntfy's template fails.
        func title(_ data: NtfyTemplateData) throws(ExecutionError) -> String
    }

    /// A failure while a template runs: ntfy answers it as `40045`, with Go's error as the detail.
    struct ExecutionError: Error, Sendable, Equatable {
        /// Go's error text (the one of `fail` exactly; others without the line and column).
        var detail: String

        init(detail: String) {
            self.detail = detail
        }

        /// A failure at a template node, worded as Go's template words it.
        init(at node: String, _ reason: String) {
            detail = "executing \"\" at <\(node)>: \(reason)"
        }
    }

    /// What a template made of a publish: the title (empty: none) and the message (empty: ntfy's
    /// `triggered`).
    package struct Rendered: Sendable, Equatable {
        package var title: String
        package var message: String
    }

    /// Renders a publish.
    /// - Parameters:
    ///   - source: The JSON the template reads (the body).
    ///   - title: The title parameter (inline templating's title template).
    ///   - message: The message parameter (inline templating's message template).
    ///   - priority: The priority parameter (inline templating's priority template).
    /// - Throws: `NtfyError` as ntfy answers: `40047` (no such template), `40042` (the body is not
    ///   JSON), `40043` (an inline Go template, which Herald cannot run), `40045` (the template
    ///   failed, e.g. `github` given an event it does not handle), `40041` (a title or message over
    ///   4,096 bytes).
    package func render(
        source: [UInt8], title: String?, message: String?, priority: String?
    ) throws(NtfyError) -> Rendered {
        let names = Self.builtIns.map(\.name).joined(separator: ", ")
        let rendered: Rendered
        switch self {
        case .named(let name):
            guard let template = Self.builtIns.first(where: { $0.name == name }) else {
                throw .templateNotFound("Herald serves only ntfy's built-in templates, \(names)")
            }
            let data = NtfyTemplateData(try Self.json(source))
            // As ntfy: the message first, then the title, each failure named after its part.
            let message: String
            let title: String
            do throws(ExecutionError) {
                message = try template.message(data)
            } catch {
                throw .templateExecutionFailed("template \(name) (message): \(error.detail)")
            }
            do throws(ExecutionError) {
                title = try template.title(data)
            } catch {
                throw .templateExecutionFailed("template \(name) (title): \(error.detail)")
            }
            rendered = Rendered(title: Self.output(title), message: Self.output(message))
        case .inline:
            _ = try Self.json(source)
            for parameter in [message, title, priority] where parameter?.contains("{{") == true {
                throw .templateInvalid("Herald does not run Go templates: use X-Template: \(names), or no {{ }}")
            }
            // Text without an action is written as it is.
            rendered = Rendered(title: Self.output(title ?? ""), message: Self.output(message ?? ""))
        }
        guard rendered.title.utf8.count <= NtfyMessage.maxMessageBytes,
            rendered.message.utf8.count <= NtfyMessage.maxMessageBytes
        else { throw .templatedMessageTooLarge() }
        return rendered
    }

    /// The body as JSON.
    /// - Throws: `NtfyError` `40042` when it is not one JSON value.
    private static func json(_ source: [UInt8]) throws(NtfyError) -> JSONValue {
        do throws(HeraldError) {
            return try JSONValue.parse(source)
        } catch {
            throw .templateSourceNotJSON()
        }
    }

    /// What ntfy keeps of a template's output: a literal `\n` made a line break, then Go's
    /// `strings.TrimSpace` (Unicode white space at both ends).
    static func output(_ text: String) -> String {
        var scalars: [Unicode.Scalar] = []
        scalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if scalar == "n", scalars.last == "\\" {
                scalars[scalars.count - 1] = "\n"
            } else {
                scalars.append(scalar)
            }
        }
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars[start...end])
        return String(out)
    }
}
