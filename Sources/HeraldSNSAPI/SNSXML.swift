import HTTPTypes
import Hummingbird
import NIOCore

/// SNS's XML answers, written by hand: the shapes are few and flat.
package enum SNSXML {
    /// `<name>text</name>`, the text escaped.
    package static func element(_ name: String, _ text: String) -> String {
        "<\(name)>\(escape(text))</\(name)>"
    }

    /// A string map as SNS writes `Attributes`: `<entry><key/><value/></entry>…`.
    package static func entries(_ name: String, _ map: [String: String]) -> String {
        "<\(name)>"
            + map.keys.sorted().map { "<entry>\(element("key", $0))\(element("value", map[$0] ?? ""))</entry>" }
            .joined() + "</\(name)>"
    }

    /// `<Action>Response><Action>Result>result</…Result><ResponseMetadata>…` (no Result element
    /// for actions that return nothing).
    static func success(action: String, result: String?, requestID: String) -> Response {
        var xml = "<\(action)Response xmlns=\"\(SNSAPIRoutes.namespace)\">"
        if let result { xml += "<\(action)Result>\(result)</\(action)Result>" }
        xml += "<ResponseMetadata><RequestId>\(requestID)</RequestId></ResponseMetadata></\(action)Response>"
        return response(xml, status: .ok, requestID: requestID)
    }

    static func response(_ xml: String, status: HTTPResponse.Status, requestID: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/xml"
        headers[HTTPField.Name("x-amzn-RequestId")!] = requestID
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: xml)))
    }

    /// Text escaped for element content.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            // A character XML 1.0 cannot carry, even as a reference: the replacement character.
            case _ where !isCharacter(scalar): escaped.unicodeScalars.append("\u{FFFD}")
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Whether every character of `text` is one XML 1.0 allows (§2.2 `Char`).
    static func isText(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy(isCharacter)
    }

    private static func isCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x9, 0xA, 0xD, 0x20...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF: true
        default: false
        }
    }
}
