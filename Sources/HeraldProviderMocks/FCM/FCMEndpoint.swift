import Foundation
import HeraldCore

/// The behaviour of FCM HTTP v1's `POST /v1/projects/<project>/messages:send` and of Google's token endpoint behind
/// ``MockFCMServer``: authentication, message checks, scripted answers and the request log.
final class FCMEndpoint: Sendable {
    let log = RequestLog<MockFCMServer.RecordedRequest>()
    let oauth: GoogleOAuthEndpoint
    private let projectID: String
    private let scripts = TokenScripts<MockFCMServer.ScriptedResponse>()

    init(projectID: String, oauth: GoogleOAuthEndpoint) {
        self.projectID = projectID
        self.oauth = oauth
    }

    func script(token: String, _ response: MockFCMServer.ScriptedResponse, times: Int?) {
        scripts.add(token: token, response, times: times)
    }

    func clearScripts() {
        scripts.clear()
    }

    func respond(to request: TestHTTPRequest) async -> TestHTTPResponse {
        if request.path == "/token" || request.path.hasPrefix("/token?") {
            return await oauth.respond(to: request)
        }
        var record = MockFCMServer.RecordedRequest(
            method: request.method, path: request.path, headers: request.headers, body: request.body,
            json: try? JSONValue.parse(request.body), accessToken: Self.bearerToken(request.header("authorization")),
            projectID: Self.projectID(inPath: request.path), token: nil, status: 200,
            connectionID: request.connectionID,
            streamID: request.streamID)

        var response: TestHTTPResponse
        switch check(request, record: &record) {
        case .failure(let error):
            response = Self.response(for: error)
            if error.code == 401 {
                response.headers.append(("www-authenticate", #"Bearer realm="https://accounts.google.com/""#))
            }
            record.errorStatus = error.status
            record.errorCode = error.fcmErrorCode
        case .success(let send):
            let scripted = send.token.flatMap { scripts.next(for: $0) }
            if let scripted, let error = scripted.error {
                response = Self.response(for: error)
                if let retryAfter = scripted.retryAfter { response.headers.append(("retry-after", String(retryAfter))) }
                record.errorStatus = error.status
                record.errorCode = error.fcmErrorCode
            } else {
                // FCM answers a dry run with a fixed fake message ID.
                let id = send.validateOnly ? "fake_message_id" : Self.messageID()
                let name = "projects/\(projectID)/messages/\(id)"
                record.messageName = name
                response = TestHTTPResponse(
                    status: 200, headers: [("content-type", "application/json; charset=UTF-8")],
                    body: Array(#"{"name":"\#(name)"}"#.utf8))
            }
            response.delay = scripted?.delay ?? .zero
        }
        record.status = response.status
        log.append(record)
        return response
    }

    private func check(
        _ request: TestHTTPRequest, record: inout MockFCMServer.RecordedRequest
    ) -> Result<FCMSend, GoogleRPCError> {
        guard request.method == "POST", let project = record.projectID else { return .failure(.methodNotFound) }
        guard let accessToken = record.accessToken, oauth.accepts(accessToken, now: Date()) else {
            return .failure(.unauthenticated)
        }
        guard project == projectID else {
            return .failure(
                GoogleRPCError(
                    code: 403, status: "PERMISSION_DENIED",
                    message: "Permission 'cloudmessaging.messages.create' denied on resource "
                        + "'//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist).",
                    details: [.fcmError("SENDER_ID_MISMATCH")]))
        }
        let result = FCMMessageRules.validate(request.body)
        if case .success(let send) = result { record.token = send.token }
        return result
    }

    private static func response(for error: GoogleRPCError) -> TestHTTPResponse {
        TestHTTPResponse(
            status: error.code, headers: [("content-type", "application/json; charset=UTF-8")], body: error.body())
    }

    /// The project of a `/v1/projects/<project>/messages:send` path.
    static func projectID(inPath path: String) -> String? {
        let prefix = "/v1/projects/"
        let suffix = "/messages:send"
        guard path.hasPrefix(prefix), path.hasSuffix(suffix), path.count > prefix.count + suffix.count else {
            return nil
        }
        let project = path.dropFirst(prefix.count).dropLast(suffix.count)
        return project.contains("/") ? nil : String(project)
    }

    static func bearerToken(_ authorization: String?) -> String? {
        guard let authorization else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1])
    }

    /// An ID shaped like FCM's: `0:<microseconds>%<16 hex digits>`.
    private static func messageID() -> String {
        let micros = Int64(Date().timeIntervalSince1970 * 1_000_000)
        let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        return "0:\(micros)%\(String(repeating: "0", count: 16 - suffix.count))\(suffix)"
    }
}
