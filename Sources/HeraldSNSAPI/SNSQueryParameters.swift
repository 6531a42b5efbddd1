import Foundation
import HeraldAPI
import HeraldCore

/// A Query API request's form-encoded parameters (`Action=Publish&Version=2010-03-31&…`), with
/// the flattened shapes SDKs send: string maps as `<name>.entry.N.key` / `.value`, message
/// attributes as `MessageAttributes.entry.N.Name` / `.Value.DataType` / `.Value.StringValue`.
package struct SNSQueryParameters {
    /// One message attribute as sent.
    package struct MessageAttribute: Equatable {
        package var dataType: String
        package var value: String
    }

    private(set) var values: [String: String] = [:]

    /// Parses `application/x-www-form-urlencoded` text (`+` is a space).
    package init(form: String) {
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

    package subscript(name: String) -> String? { values[name] }

    /// Refuses a parameter whose name or value holds a character XML 1.0 cannot carry (NUL and
    /// other control characters): whatever Herald stores it answers in XML, which SDKs' parsers
    /// would then refuse whole.
    /// - Throws: SNS's `InvalidParameter` naming the parameter.
    package func requireXMLText() throws(SNSAPIFailure) {
        for (name, value) in values where !SNSXML.isText(name) || !SNSXML.isText(value) {
            let shown = SNSXML.isText(name) ? name : "(name)"
            throw .invalidParameter("Invalid parameter: \(shown) Reason: holds a character XML cannot carry")
        }
    }

    /// A required, non-empty parameter.
    /// - Throws: SNS's `InvalidParameter` naming it.
    package func required(_ name: String) throws(SNSAPIFailure) -> String {
        guard let value = values[name], !value.isEmpty else {
            throw .invalidParameter("Invalid parameter: \(name)")
        }
        return value
    }

    /// The key a list starts after, from `NextToken` (nil: from the start). The token is the
    /// base64url of the last key of the page before, opaque to callers.
    /// - Throws: SNS's `InvalidParameter` for a token Herald did not give.
    package func pageStart() throws(SNSAPIFailure) -> String? {
        guard let token = values["NextToken"], !token.isEmpty else { return nil }
        guard let bytes = Base64URL.decode(token), let key = String(validating: bytes, as: UTF8.self), !key.isEmpty
        else { throw .invalidParameter("Invalid parameter: NextToken") }
        return key
    }

    /// `<NextToken>` for a page read with one more row than ``SNSQueryParameters/pageSize``: the
    /// last key shown when there is more, else nothing.
    package static func nextToken(after keys: [String]) -> String {
        guard keys.count > pageSize, let last = keys.dropLast().last else { return "" }
        return SNSXML.element("NextToken", Base64URL.encode(Array(last.utf8)))
    }

    /// The most items a list action answers at once, as SNS's list actions do.
    package static let pageSize = 100

    /// A string map: `<prefix>.entry.N.key` and `.value`, N from 1.
    package func map(_ prefix: String) -> [String: String] {
        var map: [String: String] = [:]
        var index = 1
        while let key = values["\(prefix).entry.\(index).key"] {
            if !key.isEmpty { map[key] = values["\(prefix).entry.\(index).value"] ?? "" }
            index += 1
        }
        return map
    }

    /// `MessageAttributes`, by name.
    package func messageAttributes() -> [String: MessageAttribute] {
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
