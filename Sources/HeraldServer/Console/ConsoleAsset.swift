import HTTPTypes
import HeraldAPI
import Hummingbird
import NIOCore
import OpenAPIKit

/// A file of the console, embedded in the binary (SwiftPM `embedInCode` resources): no build step,
/// no files to install, nothing from a CDN.
struct ConsoleAsset: Sendable {
    var path: String
    var contentType: String
    var bytes: ByteBuffer
    var summary: String

    static let all: [ConsoleAsset] = [
        ConsoleAsset(
            path: "/console", contentType: "text/html; charset=utf-8",
            bytes: ByteBuffer(bytes: PackageResources.console_html), summary: "The web console's page."),
        ConsoleAsset(
            path: "/console/console.css", contentType: "text/css; charset=utf-8",
            bytes: ByteBuffer(bytes: PackageResources.console_css), summary: "The web console's style sheet."),
        ConsoleAsset(
            path: "/console/console.js", contentType: "text/javascript; charset=utf-8",
            bytes: ByteBuffer(bytes: PackageResources.console_js), summary: "The web console's script."),
    ]

    func response() -> Response {
        Response(
            status: .ok, headers: [.contentType: contentType, .cacheControl: "no-cache"],
            body: .init(byteBuffer: bytes))
    }

    var operation: APIOperation {
        let mediaType = String(contentType.prefix { $0 != ";" })
        return APIOperation(
            .get, path, tags: ["Console"], summary: summary, security: .none,
            responses: [
                (
                    200,
                    .custom(
                        OpenAPI.Response(
                            description: "The file.",
                            content: [
                                OpenAPI.ContentType(rawValue: mediaType)!: .b(
                                    OpenAPI.Content(schema: JSONSchema.string))
                            ]))
                )
            ])
    }
}
