import Foundation

/// A Query API request's form-encoded parameters (`Action=Publish&Version=2010-03-31&…`), with
/// the flattened shapes SDKs send: string maps as `<name>.entry.N.key` / `.value`, message
/// attributes as `MessageAttributes.entry.N.Name` / `.Value.DataType` / `.Value.StringValue`.
struct SNSQueryParameters {
    /// One message attribute as sent.
    struct MessageAttribute: Equatable {
        var dataType: String
        var value: String
    }

    private(set) var values: [String: String] = [:]

    /// Parses `application/x-www-form-urlencoded` text (`+` is a space).
    init(form: String) {
        for pair in form.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = Self.decode(parts[0])
            values[name] = parts.count > 1 ? Self.decode(parts[1]) : ""
        }
    }

    private static func decode(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    subscript(name: String) -> String? { values[name] }

    /// A required, non-empty parameter.
    /// - Throws: SNS's `InvalidParameter` naming it.
    func required(_ name: String) throws(SNSAPIFailure) -> String {
        guard let value = values[name], !value.isEmpty else {
            throw .invalidParameter("Invalid parameter: \(name)")
        }
        return value
    }

    /// A string map: `<prefix>.entry.N.key` and `.value`, N from 1.
    func map(_ prefix: String) -> [String: String] {
        var map: [String: String] = [:]
        var index = 1
        while let key = values["\(prefix).entry.\(index).key"] {
            map[key] = values["\(prefix).entry.\(index).value"] ?? ""
            index += 1
        }
        return map
    }

    /// `MessageAttributes`, by name.
    func messageAttributes() -> [String: MessageAttribute] {
        var attributes: [String: MessageAttribute] = [:]
        var index = 1
        while let name = values["MessageAttributes.entry.\(index).Name"] {
            let entry = "MessageAttributes.entry.\(index).Value"
            attributes[name] = MessageAttribute(
                dataType: values["\(entry).DataType"] ?? "String",
                value: values["\(entry).StringValue"] ?? values["\(entry).BinaryValue"] ?? "")
            index += 1
        }
        return attributes
    }
}
