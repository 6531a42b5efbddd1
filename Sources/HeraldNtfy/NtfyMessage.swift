import Foundation
import HeraldCore

/// One ntfy publish, from either form ntfy takes: the JSON form (`POST /` with `{"topic",
/// "message", "title", …}`, what Apprise sends) or the topic form (`PUT`/`POST /<topic>` with the
/// message as the body and `Title`, `Priority`, `Tags`, `Click`, `Attach`, `Icon`, `Actions`,
/// `Delay`, `Markdown` as header fields, their `X-` forms and short aliases, or query parameters).
/// As ntfy does, a JSON member wins over the header field and the header over the query parameter.
/// With `Template` (``NtfyTemplate``), the body is a tool's JSON webhook that a template turns into
/// the title and message.
package struct NtfyMessage: Sendable, Equatable {
    package var topic: String
    package var message: String
    package var title: String?
    /// 1 (min) to 5 (max); nil: ntfy's default, 3.
    package var priority: Int?
    package var tags: [String]
    package var click: String?
    package var attach: String?
    package var icon: String?
    package var actions: JSONValue?
    package var markdown: Bool
    /// Seconds from now to deliver at (ntfy's `Delay`, 10 s to 3 days).
    package var delay: Int?
    /// The sequence a message updates (ntfy's `sequence_id`): the path's second segment, the
    /// `X-Sequence-ID` header, or the JSON member (docs/dialects/ntfy.md, "Updating and deleting").
    package var sequenceID: String?

    /// The largest message ntfy keeps as text (a larger one would be an attachment, which Herald does not keep).
    package static let maxMessageBytes = 4_096
    /// ntfy's topic rule: 1 to 64 of `A-Z a-z 0-9 _ -`.
    package static func isValidTopic(_ topic: String) -> Bool {
        !topic.isEmpty && topic.utf8.count <= 64
            && topic.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_")
            }
    }

    /// Each parameter's names, as ntfy reads them (header fields case-insensitively, then the query).
    package static let aliases: [String: [String]] = [
        "message": ["x-message", "message", "m"],
        "title": ["x-title", "title", "t"],
        "priority": ["x-priority", "priority", "prio", "p"],
        "tags": ["x-tags", "tags", "tag", "ta"],
        "delay": ["x-delay", "delay", "x-at", "at", "x-in", "in"],
        "actions": ["x-actions", "actions", "action"],
        "click": ["x-click", "click"],
        "attach": ["x-attach", "attach", "a"],
        "markdown": ["x-markdown", "markdown", "md"],
        "icon": ["x-icon", "icon"],
        "template": ["x-template", "template", "tpl"],
        "sequence_id": ["x-sequence-id", "sequence-id", "sid"],
    ]

    /// A parameter by its ntfy name (`"template"`), under any of its ``aliases``, as ntfy reads it:
    /// the first that is not empty.
    /// - Parameter parameter: A header field or query parameter by name (lower-case).
    package static func value(_ name: String, _ parameter: (String) -> String?) -> String? {
        for alias in aliases[name] ?? [name] {
            if let found = parameter(alias), !found.isEmpty { return found }
        }
        return nil
    }

    /// Reads a publish.
    /// - Parameters:
    ///   - topic: The path's topic (nil for the JSON form, whose body names it).
    ///   - body: The request body: the message (topic form) or the JSON publish (JSON form).
    ///   - parameter: A header field or query parameter by name (lower-case), as the route reads them.
    ///   - now: For `Delay` given as a Unix time.
    /// - Throws: `NtfyError` with ntfy's code: 40009 (topic), 40007 (priority), 40004/40006 (delay),
    ///   40013/40021 (attach/icon URL), 40017/40024 (JSON body), 40018 (actions), 41301 (too large),
    ///   41303 (a templated body over ``NtfyTemplate/maxBodyBytes``), and the template's
    ///   (``NtfyTemplate/render(source:title:message:priority:)``).
    package init(
        topic: String?, sequenceID path: String? = nil, body: [UInt8], parameter: (String) -> String?, now: Date
    ) throws(NtfyError) {
        func value(_ name: String) -> String? { Self.value(name, parameter) }
        let template = NtfyTemplate(value("template"))
        var json: [String: JSONValue] = [:]
        if topic == nil {
            guard body.count <= 2 * Self.maxMessageBytes else { throw .jsonTooLarge() }
            let parsed: JSONValue
            do throws(HeraldError) {
                parsed = try JSONValue.parse(body)
            } catch {
                throw .invalidJSON()
            }
            guard case .object(let object) = parsed else { throw .notJSONMessage() }
            json = object
        } else if template != nil {
            // The body is the webhook's JSON, which ntfy takes up to its JSON limit.
            guard body.count <= NtfyTemplate.maxBodyBytes else { throw .jsonTooLarge() }
        } else if body.count > Self.maxMessageBytes {
            throw .tooLarge()
        }
        func member(_ name: String) throws(NtfyError) -> String? {
            switch json[name] {
            case nil, .null?: return nil
            case .string(let text)?: return text.isEmpty ? nil : text
            case .number(let number)?: return number.description
            default: throw .invalidJSON()
            }
        }
        let topicName: String
        if let topic { topicName = topic } else { topicName = try member("topic") ?? "" }
        guard Self.isValidTopic(topicName) else { throw .invalidTopic() }
        self.topic = topicName
        // The path's, then the JSON member, then the header and query forms (ntfy's sequence ids
        // follow its topic rule).
        if let path { sequenceID = path } else { sequenceID = try member("sequence_id") ?? value("sequence_id") }
        if let sequenceID, !Self.isValidTopic(sequenceID) { throw .invalidSequenceID() }
        // An empty body leaves the message to the `Message` parameter, as in ntfy.
        let text = topic == nil ? try member("message") : body.isEmpty ? nil : String(decoding: body, as: UTF8.self)
        let trimmed = (text ?? value("message") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        message = trimmed.isEmpty ? "triggered" : trimmed
        title = try member("title") ?? value("title")

        // Priority: a JSON number 1-5, or a header's number or name.
        let priorityText: String?
        if case .number(let number)? = json["priority"] {
            priorityText = number.description
        } else {
            priorityText = try member("priority") ?? value("priority")
        }
        // An inline priority template is refused as a template (40043), after the other parameters.
        if let priorityText, template != .inline || !priorityText.contains("{{") {
            guard let level = Self.priority(priorityText) else { throw .invalidPriority() }
            priority = level
        }

        if case .array(let list)? = json["tags"] {
            tags = list.compactMap { if case .string(let tag) = $0 { tag } else { nil } }
        } else {
            tags =
                (try member("tags") ?? value("tags"))?.split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } ?? []
        }
        click = try member("click") ?? value("click")
        attach = try member("attach") ?? value("attach")
        if let attach, !Self.isHTTPURL(attach) { throw .invalidAttachURL() }
        icon = try member("icon") ?? value("icon")
        if let icon, !Self.isHTTPURL(icon) { throw .invalidIconURL() }
        switch json["actions"] {
        case .array(let list)?: actions = .array(list)
        case nil, .null?:
            actions = (try member("actions") ?? value("actions")).map(JSONValue.string)
        default: throw .invalidActions()
        }
        if case .bool(let flag)? = json["markdown"] {
            markdown = flag
        } else {
            markdown =
                ["yes", "true", "1"].contains(value("markdown")?.lowercased() ?? "")
                || parameter("content-type")?.lowercased().hasPrefix("text/markdown") == true
        }
        if let delayText = try member("delay") ?? value("delay") {
            guard let seconds = Self.delay(delayText, now: now) else { throw .invalidDelay() }
            guard seconds >= 10 else { throw .delayTooSmall() }
            guard seconds <= 3 * 86_400 else { throw .delayTooLarge() }
            delay = seconds
        }

        // As ntfy, the template runs once every other parameter has been read.
        if let template {
            // The JSON form has no template member: as ntfy rewrites it to the topic form, the
            // message it carries is the template's JSON.
            let source = topic == nil ? Array((text ?? "triggered").utf8) : body
            let rendered = try template.render(
                source: source, title: try member("title") ?? value("title"), message: value("message"),
                priority: priorityText)
            message = rendered.message.isEmpty ? "triggered" : rendered.message
            title = rendered.title.isEmpty ? nil : rendered.title
        }
    }

    /// ntfy's priorities: `1`/`min`, `2`/`low`, `3`/`default`, `4`/`high`, `5`/`max`/`urgent`.
    static func priority(_ text: String) -> Int? {
        switch text.trimmingCharacters(in: .whitespaces).lowercased() {
        case "1", "min": 1
        case "2", "low": 2
        case "3", "default": 3
        case "4", "high": 4
        case "5", "max", "urgent": 5
        default: nil
        }
    }

    /// A delay as ntfy reads it: a Unix time, or a duration such as `30min`, `2h`, `1d`, `90s`,
    /// `1h30m`, `10 minutes`. Nil for anything else (ntfy's natural-language times are not read).
    static func delay(_ text: String, now: Date) -> Int? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let unix = Int(trimmed), unix > 1_000_000_000 { return unix - Int(now.timeIntervalSince1970) }
        var total = 0
        var rest = Substring(trimmed)
        let units: [(names: [String], seconds: Int)] = [
            (["days", "day", "d"], 86_400), (["hours", "hour", "h"], 3_600),
            (["minutes", "minute", "mins", "min", "m"], 60), (["seconds", "second", "secs", "sec", "s"], 1),
        ]
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isNumber }
            guard let amount = Int(digits), amount <= 1_000_000 else { return nil }
            rest = rest.dropFirst(digits.count).drop { $0 == " " }
            guard let unit = units.first(where: { unit in unit.names.contains { rest.hasPrefix($0) } }),
                let name = unit.names.first(where: { rest.hasPrefix($0) })
            else { return nil }
            total += amount * unit.seconds
            rest = rest.dropFirst(name.count).drop { $0 == " " || $0 == "," }
        }
        return total > 0 ? total : nil
    }

    private static func isHTTPURL(_ text: String) -> Bool {
        (text.hasPrefix("https://") || text.hasPrefix("http://")) && text.utf8.count <= 2_048
    }

    /// The notification: title and body, ntfy's priority as the provider's (1–2 normal, 3–5 high;
    /// 5 time-sensitive on iOS, 1 passive), the tags, click URL, icon, actions and topic in the data
    /// (the click URL is also the deep link, an attached URL the image), `Delay` as a push time.
    package func sendRequest(to target: NotificationTarget, source: String, now: Date) -> SendRequest {
        var data: [String: JSONValue] = ["topic": .string(topic)]
        if !tags.isEmpty { data["tags"] = .array(tags.map(JSONValue.string)) }
        data["click"] = click.map(JSONValue.string)
        data["icon"] = icon.map(JSONValue.string)
        data["attach"] = attach.map(JSONValue.string)
        data["actions"] = actions
        if markdown { data["markdown"] = .bool(true) }
        data["priority"] = .number(JSONNumber(priority ?? 3))
        let level = priority ?? 3
        let payload = NotificationPayload(
            title: title, body: message, image: attach, deepLink: click, data: data,
            interruptionLevel: level == 5 ? .timeSensitive : level == 1 ? .passive : nil,
            priority: level >= 3 ? .high : .normal)
        var request = SendRequest(target: target, payload: payload, source: source, respectPreferences: true)
        if let delay { request.pushTime = .instant(now.addingTimeInterval(TimeInterval(delay))) }
        if let sequenceID {
            // A message of a sequence can be updated, cleared and deleted: it carries the sequence's key.
            request.updatable = true
            request.payload.collapseID = Self.replacementKey(topic: topic, sequenceID: sequenceID)
        }
        return request
    }

    /// The replacement key of a sequence on the devices: `ntfy-<topic>-<sequence id>`, or, when that is
    /// over the 64 bytes APNs takes, `ntfy-` and a hash of both.
    package static func replacementKey(topic: String, sequenceID: String) -> String {
        let key = "ntfy-\(topic)-\(sequenceID)"
        return key.utf8.count <= 64 ? key : "ntfy-" + SecretFingerprint.of("\(topic)/\(sequenceID)")
    }
}
