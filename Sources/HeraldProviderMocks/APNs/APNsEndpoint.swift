import Foundation
import HeraldCore

/// The behaviour of `POST /3/device/<token>` on api.push.apple.com: checks, scripted answers and the request log
/// behind ``MockAPNsServer``.
final class APNsEndpoint: Sendable {
    private struct ErrorBody: Encodable {
        var reason: String
        var timestamp: Int64?
    }

    let log = RequestLog<MockAPNsServer.RecordedRequest>()
    private let verifier: ProviderTokenVerifier
    private let scripts = TokenScripts<MockAPNsServer.ScriptedResponse>()

    init(credentials: [MockAPNsServer.Credential]) async throws {
        verifier = try await ProviderTokenVerifier(credentials: credentials)
    }

    func script(token: String, _ response: MockAPNsServer.ScriptedResponse, times: Int?) {
        scripts.add(token: token, response, times: times)
    }

    func clearScripts() {
        scripts.clear()
    }

    func respond(to request: TestHTTPRequest) async -> TestHTTPResponse {
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

    /// Authenticates a request and returns the topics its credential may push to.
    ///
    /// A request with an `authorization` header is judged by its provider token, whatever the connection; one
    /// without is judged by the connection's client certificate (NIOSSL has already checked that the mock's CA issued
    /// it), which covers the app in its subject's UID and that app's push-type topics. With neither, APNs answers
    /// `MissingProviderToken`.
    private func authenticate(
        _ request: TestHTTPRequest, record: inout MockAPNsServer.RecordedRequest
    ) async -> Result<Set<String>, APNsRejection> {
        let authorization = request.header("authorization")
        if authorization?.isEmpty ?? true, let certificate = request.clientCertificate {
            guard let bundleID = TestAPNsCertificate.bundleID(of: certificate) else { return .failure(.badCertificate) }
            record.authentication = .certificate(bundleID: bundleID)
            return .success([bundleID])
        }
        let (verified, tokenRejection) = await verifier.verify(authorization: authorization, now: Date())
        record.providerToken = verified?.claims
        if let tokenRejection { return .failure(tokenRejection) }
        guard let verified else { return .failure(.invalidProviderToken) }
        record.authentication = .token(keyID: verified.claims.keyID)
        return .success(verified.credential.topics)
    }

    private static func errorBody(reason: String, timestamp: Date?) -> [UInt8] {
        let body = ErrorBody(
            reason: reason, timestamp: timestamp.map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) })
        // Encoding two plain fields cannot fail.
        return (try? Array(JSONEncoder().encode(body))) ?? Array(#"{"reason":"InternalServerError"}"#.utf8)
    }
}
