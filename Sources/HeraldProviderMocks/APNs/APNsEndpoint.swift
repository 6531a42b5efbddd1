import Foundation
import HeraldCore

/// The behaviour of api.push.apple.com behind ``MockAPNsServer``: `POST /3/device/<token>` and, for iOS 18's
/// broadcast channels, `POST /4/broadcasts/apps/<bundle ID>` (``respond(toBroadcast:)``), with their checks,
/// scripted answers and one request log.
final class APNsEndpoint: Sendable {
    private struct ErrorBody: Encodable {
        var reason: String
        var timestamp: Int64?
    }

    let log = RequestLog<MockAPNsServer.RecordedRequest>()
    let authenticator: APNsAuthenticator
    /// The channels broadcasts may go to.
    let channels: APNsChannelRegistry
    private let scripts = TokenScripts<MockAPNsServer.ScriptedResponse>()

    init(credentials: [MockAPNsServer.Credential], channels: APNsChannelRegistry = APNsChannelRegistry()) async throws {
        authenticator = try await APNsAuthenticator(credentials: credentials)
        self.channels = channels
    }

    func script(token: String, _ response: MockAPNsServer.ScriptedResponse, times: Int?) {
        scripts.add(token: token, response, times: times)
    }

    func clearScripts() {
        scripts.clear()
    }

    func respond(to request: TestHTTPRequest) async -> TestHTTPResponse {
        if request.path.hasPrefix(APNsChannelRules.broadcastPathPrefix) { return await respond(toBroadcast: request) }
        let requestedID = request.header("apns-id")
        let apnsID = requestedID.flatMap { APNsRequestRules.isUUID($0) ? $0 : nil } ?? UUID().uuidString
        var record = MockAPNsServer.RecordedRequest(
            method: request.method, path: request.path, token: nil, headers: request.headers, body: request.body,
            json: request.body.isEmpty ? nil : try? JSONValue.parse(request.body), providerToken: nil,
            authentication: nil, status: 200, reason: nil, apnsID: apnsID, connectionID: request.connectionID,
            streamID: request.streamID)

        var response = TestHTTPResponse(status: 200, headers: [("apns-id", apnsID)])
        if let rejection = await check(request, record: &record) {
            response.status = rejection.status
            response.body = Self.errorBody(reason: rejection.reason, timestamp: nil)
            record.reason = rejection.reason
        } else if let token = record.token, let scripted = scripts.next(for: token) {
            response.delay = scripted.delay
            switch scripted.outcome {
            case .success:
                response.headers.append(("apns-unique-id", UUID().uuidString.lowercased()))
            case .error(let status, let reason, let timestamp, let retryAfter):
                response.status = status
                response.body = Self.errorBody(reason: reason, timestamp: timestamp)
                record.reason = reason
                if let retryAfter { response.headers.append(("retry-after", String(retryAfter))) }
            }
        } else {
            // The development environment's Delivery Log identifier; the mock always answers like the sandbox.
            response.headers.append(("apns-unique-id", UUID().uuidString.lowercased()))
        }
        record.status = response.status
        log.append(record)
        return response
    }

    /// Runs APNs' checks in the order a request meets them: method, path, headers, authentication, device token,
    /// topic and push type, options, payload.
    private func check(
        _ request: TestHTTPRequest, record: inout MockAPNsServer.RecordedRequest
    ) async -> APNsRejection? {
        guard request.method == "POST" else { return .methodNotAllowed }
        let token: String
        switch APNsRequestRules.deviceToken(inPath: request.path) {
        case .failure(let rejection): return rejection
        case .success(let value): token = value
        }
        record.token = token
        if let rejection = APNsRequestRules.checkDuplicates(in: request) { return rejection }

        let allowedTopics: Set<String>
        switch await authenticate(request, record: &record) {
        case .failure(let rejection): return rejection
        case .success(let topics): allowedTopics = topics
        }

        if let rejection = APNsRequestRules.checkDeviceToken(token) { return rejection }
        let pushType: String
        switch APNsRequestRules.checkTopic(
            request.header("apns-topic"), pushType: request.header("apns-push-type"),
            allowedTopics: allowedTopics)
        {
        case .failure(let rejection): return rejection
        case .success(let value): pushType = value
        }
        if let rejection = APNsRequestRules.checkOptions(of: request) { return rejection }
        return APNsRequestRules.checkPayload(request.body, json: record.json, pushType: pushType)
    }

    /// Authenticates a request and returns the topics its credential may push to: a client certificate covers its
    /// app's push-type topics too (``APNsRequestRules/checkTopic(_:pushType:allowedTopics:)``).
    func authenticate(
        _ request: TestHTTPRequest, record: inout MockAPNsServer.RecordedRequest
    ) async -> Result<Set<String>, APNsRejection> {
        let outcome = await authenticator.authenticate(request)
        record.providerToken = outcome.claims
        record.authentication = outcome.authentication
        return outcome.topics
    }

    /// The JSON body of an error answer: `{"reason": …}`, with `timestamp` in milliseconds when given.
    static func errorBody(reason: String, timestamp: Date? = nil) -> [UInt8] {
        let body = ErrorBody(
            reason: reason, timestamp: timestamp.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) })
        // Encoding two plain fields cannot fail.
        return (try? Array(JSONEncoder().encode(body))) ?? Array(#"{"reason":"InternalServerError"}"#.utf8)
    }
}
