import Foundation
import HeraldCore

extension APNsEndpoint {
    /// Answers `POST /4/broadcasts/apps/<bundle ID>` ("Sending broadcast push notification requests to APNs"): a Live
    /// Activity update or end for every device subscribed to the channel in `apns-channel-id`.
    ///
    /// A success is `200` with `apns-request-id` (the request's, or a new one) and `apns-unique-id` ("A
    /// server-generated unique message identifier returned in case of a successful request"); an error is the status
    /// and `{"reason": …}` of "Handling error responses from Apple Push Notification service", with
    /// `apns-request-id`. Device scripts do not apply: a broadcast names no device.
    func respond(toBroadcast request: TestHTTPRequest) async -> TestHTTPResponse {
        let requestID = APNsChannelRules.answerRequestID(for: request)
        var record = MockAPNsServer.RecordedRequest(
            method: request.method, path: request.path, token: nil, headers: request.headers, body: request.body,
            json: request.body.isEmpty ? nil : try? JSONValue.parse(request.body), providerToken: nil,
            authentication: nil, status: 200, reason: nil, apnsID: requestID, connectionID: request.connectionID,
            streamID: request.streamID, channelID: request.header("apns-channel-id"))

        var response = TestHTTPResponse(status: 200, headers: [("apns-request-id", requestID)])
        if let rejection = await checkBroadcast(request, record: &record) {
            response.status = rejection.status
            response.body = Self.errorBody(reason: rejection.reason)
            record.reason = rejection.reason
        } else {
            response.headers.append(("apns-unique-id", UUID().uuidString.lowercased()))
        }
        record.status = response.status
        log.append(record)
        return response
    }

    /// Runs the broadcast checks in the order Apple describes ("APNs validates the request using either the provided
    /// authentication token or your server’s certificate. If authentication succeeds, APNs then validates the channel
    /// ID"): method, path, authentication, the app, the channel, headers, payload.
    ///
    /// A method other than `POST` is `405 MethodNotAllowed`; the channel must exist for the app of the path, else
    /// `400 ChannelNotRegistered` ("The `apns-channel-id` header used in the request doesn’t exist."), which is also
    /// the answer for a channel of another app, as channels are found per app.
    private func checkBroadcast(
        _ request: TestHTTPRequest, record: inout MockAPNsServer.RecordedRequest
    ) async -> APNsRejection? {
        guard request.method == "POST" else { return .methodNotAllowed }
        let bundleID: String
        switch APNsChannelRules.bundleID(inBroadcastPath: request.path) {
        case .failure(let rejection): return rejection
        case .success(let value): bundleID = value
        }
        let allowedTopics: Set<String>
        switch await authenticate(request, record: &record) {
        case .failure(let rejection): return rejection
        case .success(let topics): allowedTopics = topics
        }
        if let rejection = APNsChannelRules.checkBundleID(bundleID, allowedTopics: allowedTopics) { return rejection }
        let channelID: String
        switch APNsChannelRules.channelID(of: request) {
        case .failure(let rejection): return rejection
        case .success(let value): channelID = value
        }
        guard let channel = channels.channel(id: channelID, bundleID: bundleID) else { return .channelNotRegistered }
        if let rejection = APNsChannelRules.checkBroadcastHeaders(of: request, policy: channel.messageStoragePolicy) {
            return rejection
        }
        return APNsChannelRules.checkBroadcastPayload(request.body, json: record.json)
    }
}
