/// The ARNs the SNS-compatible API hands out and reads back, for one app's region and account:
/// `arn:aws:sns:<region>:<account>:app/<platform>/<name>` (platform application),
/// `…:endpoint/<platform>/<application>/<installation id>` (endpoint), `…:<topic>` (topic) and
/// `…:<topic>:<subscription id>` (subscription).
package enum SNSARN: Equatable {
    case application(platform: String, name: String)
    case endpoint(platform: String, application: String, id: String)
    case topic(String)
    case subscription(topic: String, id: String)

    /// The ARNs of one app.
    package struct Scope: Sendable {
        package var region: String
        package var accountID: String

        package var prefix: String { "arn:aws:sns:\(region):\(accountID):" }

        package func string(_ arn: SNSARN) -> String {
            switch arn {
            case .application(let platform, let name): prefix + "app/\(platform)/\(name)"
            case .endpoint(let platform, let application, let id): prefix + "endpoint/\(platform)/\(application)/\(id)"
            case .topic(let name): prefix + name
            case .subscription(let topic, let id): prefix + "\(topic):\(id)"
            }
        }

        /// Reads an ARN of this app's region and account; nil when it is not one.
        package func parse(_ text: String) -> SNSARN? {
            guard text.hasPrefix(prefix) else { return nil }
            let resource = text.dropFirst(prefix.count)
            let parts = resource.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 3, parts[0] == "app", !parts[1].isEmpty, !parts[2].isEmpty {
                return .application(platform: parts[1], name: parts[2])
            }
            if parts.count == 4, parts[0] == "endpoint", parts.dropFirst().allSatisfy({ !$0.isEmpty }) {
                return .endpoint(platform: parts[1], application: parts[2], id: parts[3])
            }
            guard parts.count == 1 else { return nil }
            let names = resource.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            switch names.count {
            case 1 where !names[0].isEmpty: return .topic(names[0])
            case 2 where !names[0].isEmpty && !names[1].isEmpty: return .subscription(topic: names[0], id: names[1])
            default: return nil
            }
        }
    }
}
