import Foundation
import HeraldSigV4

/// The SNS Query API's wire format, without I/O: a request is `POST /` with a form-encoded body
/// (`Action=…&Version=2010-03-31&…`), an answer is `<ActionResponse><ActionResult>…` or
/// `<ErrorResponse><Error><Type/><Code/><Message/></Error><RequestId/></ErrorResponse>`.
enum SNSQuery {
    /// The API version every request names.
    static let version = "2010-03-31"
    /// The request body's type, as AWS SDKs send it.
    static let contentType = "application/x-www-form-urlencoded; charset=utf-8"

    /// The form-encoded body: `Action`, `Version`, then the parameters in order, each name and
    /// value encoded as SigV4 encodes query strings (a space is `%20`).
    static func body(action: String, parameters: [(String, String)]) -> String {
        ([("Action", action), ("Version", version)] + parameters)
            .map { "\(formEncode($0.0))=\(formEncode($0.1))" }
            .joined(separator: "&")
    }

    /// A form value as the AWS SDKs encode it (Python's `quote_plus`): RFC 3986 escapes with a
    /// space as `+`. Servers that check the signature over a re-encoded form (moto) expect exactly this.
    static func formEncode(_ text: String) -> String {
        SigV4.uriEncode(text).replacingOccurrences(of: "%20", with: "+")
    }

    /// A string map as the Query API flattens it: `<prefix>.entry.N.key` and `.value`, N from 1,
    /// keys sorted so a request's bytes do not depend on dictionary order.
    static func mapEntries(_ prefix: String, _ map: [String: String]) -> [(String, String)] {
        map.keys.sorted().enumerated().flatMap { index, key in
            [("\(prefix).entry.\(index + 1).key", key), ("\(prefix).entry.\(index + 1).value", map[key] ?? "")]
        }
    }

    /// `Publish`'s message attributes: `MessageAttributes.entry.N.Name`, `.Value.DataType` and
    /// `.Value.StringValue`.
    static func messageAttributeEntries(_ attributes: [SNSMessageAttribute]) -> [(String, String)] {
        attributes.enumerated().flatMap { index, attribute in
            let entry = "MessageAttributes.entry.\(index + 1)"
            return [
                ("\(entry).Name", attribute.name), ("\(entry).Value.DataType", attribute.dataType.rawValue),
                ("\(entry).Value.StringValue", attribute.value),
            ]
        }
    }

    /// Reads an answer: on 2xx, the `<Action>Result` element (nil for actions that return nothing);
    /// otherwise the error it carries.
    static func result(action: String, status: Int, body: [UInt8]) -> Result<SNSXMLElement?, SNSError> {
        let document = SNSXMLElement.parse(body)
        guard (200..<300).contains(status) else {
            guard let document, let error = document.name == "Error" ? document : document.descendant("Error"),
                let code = error.text(of: "Code")
            else {
                return .failure(.invalidResponse(status: status, detail: "no SNS error document"))
            }
            return .failure(
                SNSError(
                    code: .service, awsCode: code, type: error.text(of: "Type"),
                    message: error.text(of: "Message") ?? error.text(of: "message") ?? code, status: status,
                    requestID: document.descendant("RequestId")?.text ?? document.descendant("RequestID")?.text))
        }
        guard let document, document.name == "\(action)Response" else {
            return .failure(.invalidResponse(status: status, detail: "no \(action)Response document"))
        }
        return .success(document.child("\(action)Result"))
    }

    /// A result's string map: `<Attributes><entry><key/><value/></entry>…</Attributes>`.
    static func attributes(in result: SNSXMLElement?) -> [String: String] {
        var attributes: [String: String] = [:]
        for entry in result?.child("Attributes")?.children ?? [] where entry.name == "entry" {
            if let key = entry.text(of: "key") { attributes[key] = entry.text(of: "value") ?? "" }
        }
        return attributes
    }
}
