import Foundation

/// The text fields of a `multipart/form-data` body (RFC 7578), as `curl -F name=value` sends them:
/// each part's `Content-Disposition: form-data; name="…"` and its content. Parts with a
/// `filename` (uploads) are skipped: a Gotify message has no file. (vapor/multipart-kit does this
/// and more, but pulls in every module of swift-collections, which doubled the build's time for
/// three text fields; DESIGN's rule on packages asks that they do the job well.)
enum MultipartForm {
    /// The fields by name; nil for a body that is not multipart with this boundary.
    static func fields(_ body: [UInt8], boundary: String) -> [String: String]? {
        let delimiter = Array("--\(boundary)".utf8)
        guard !boundary.isEmpty, body.starts(with: delimiter) else { return nil }
        var fields: [String: String] = [:]
        var index = delimiter.count
        while true {
            // After a delimiter: `--` ends the body, a line break starts a part.
            if body[index...].starts(with: Array("--".utf8)) { return fields }
            guard body[index...].starts(with: crlf) else { return nil }
            index += 2
            guard let headersEnd = find(Array("\r\n\r\n".utf8), in: body, from: index) else { return nil }
            let headers = String(decoding: body[index..<headersEnd], as: UTF8.self)
            let contentStart = headersEnd + 4
            guard let next = find(crlf + delimiter, in: body, from: contentStart) else { return nil }
            if let name = parameter("name", of: headers), parameter("filename", of: headers) == nil {
                fields[name] = String(decoding: body[contentStart..<next], as: UTF8.self)
            }
            index = next + 2 + delimiter.count
        }
    }

    private static let crlf = Array("\r\n".utf8)

    /// A parameter of the part's `Content-Disposition` header.
    private static func parameter(_ name: String, of headers: String) -> String? {
        guard
            let disposition = headers.split(separator: "\r\n").first(where: {
                $0.lowercased().hasPrefix("content-disposition:")
            })
        else { return nil }
        for piece in disposition.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == name {
                return pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2
                    ? String(pair[1].dropFirst().dropLast()) : pair[1]
            }
        }
        return nil
    }

    /// The first index of `needle` in `haystack` at or after `start`.
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else {
            return nil
        }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) {
                return index
            }
            index += 1
        }
        return nil
    }
}
