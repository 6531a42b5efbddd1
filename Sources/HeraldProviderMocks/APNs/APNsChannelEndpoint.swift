import Foundation
import HeraldCore

/// The behaviour of api-manage-broadcast.push.apple.com behind ``MockAPNsChannelServer`` ("Sending channel management
/// requests to APNs"): create, read, delete and list the broadcast channels of an app, with the request log.
///
/// - create: `POST /1/apps/<bundle ID>/channels` with the body `{"message-storage-policy": 0 or 1, "push-type":
///   "LiveActivity"}`, answered `201` with `apns-channel-id` and no body;
/// - read: `GET /1/apps/<bundle ID>/channels` with `apns-channel-id`, answered `200` with
///   `{"message-storage-policy": …, "push-type": "LiveActivity"}`;
/// - delete: `DELETE /1/apps/<bundle ID>/channels` with `apns-channel-id`, answered `204` with no body;
/// - list: `GET /1/apps/<bundle ID>/all-channels`, answered `200` with `{"channels": [<channel ID>, …]}`.
///
/// Every answer carries `apns-request-id` (the request's, or a new one); an error is the status and
/// `{"reason": …}` of "Handling error responses from Apple Push Notification service". Apple's text for the list says
/// both "the body of the response empty" and that the body has `channels`; the mock sends the body, as that is the
/// answer's only content.
final class APNsChannelEndpoint: Sendable {
    let log = RequestLog<MockAPNsChannelServer.RecordedRequest>()
    let channels: APNsChannelRegistry
    private let authenticator: APNsAuthenticator

    init(credentials: [MockAPNsServer.Credential], channels: APNsChannelRegistry) async throws {
        authenticator = try await APNsAuthenticator(credentials: credentials)
        self.channels = channels
    }

    func respond(to request: TestHTTPRequest) async -> TestHTTPResponse {
        let requestID = APNsChannelRules.answerRequestID(for: request)
        var record = MockAPNsChannelServer.RecordedRequest(
            method: request.method, path: request.path, bundleID: nil, operation: nil,
            channelID: request.header("apns-channel-id"), headers: request.headers, body: request.body,
            json: request.body.isEmpty ? nil : try? JSONValue.parse(request.body), providerToken: nil,
            authentication: nil, status: 0, reason: nil, requestID: requestID, connectionID: request.connectionID,
            streamID: request.streamID)

        var response: TestHTTPResponse
        switch await answer(request, record: &record) {
        case .success(let answer):
            response = answer
        case .failure(let rejection):
            response = TestHTTPResponse(
                status: rejection.status, body: APNsEndpoint.errorBody(reason: rejection.reason))
            record.reason = rejection.reason
        }
        response.headers.insert(("apns-request-id", requestID), at: 0)
        record.status = response.status
        log.append(record)
        return response
    }

    /// Checks a request in the order APNs meets it (path and method, authentication, the app, the request ID, then
    /// what the operation needs) and carries it out.
    private func answer(
        _ request: TestHTTPRequest, record: inout MockAPNsChannelServer.RecordedRequest
    ) async -> Result<TestHTTPResponse, APNsRejection> {
        let bundleID: String
        let operation: APNsChannelRules.Operation
        switch APNsChannelRules.operation(method: request.method, path: request.path) {
        case .failure(let rejection): return .failure(rejection)
        case .success(let route): (bundleID, operation) = route
        }
        record.bundleID = bundleID
        record.operation = operation

        let outcome = await authenticator.authenticate(request)
        record.providerToken = outcome.claims
        record.authentication = outcome.authentication
        let allowedTopics: Set<String>
        switch outcome.topics {
        case .failure(let rejection): return .failure(rejection)
        case .success(let topics): allowedTopics = topics
        }
        if let rejection = APNsChannelRules.checkBundleID(bundleID, allowedTopics: allowedTopics) {
            return .failure(rejection)
        }
        if let rejection = APNsChannelRules.checkRequestID(of: request) { return .failure(rejection) }

        switch operation {
        case .create:
            let policy: APNsChannelRegistry.MessageStoragePolicy
            switch APNsChannelRules.creationPolicy(request.body, json: record.json) {
            case .failure(let rejection): return .failure(rejection)
            case .success(let value): policy = value
            }
            guard let channel = channels.create(bundleID: bundleID, messageStoragePolicy: policy) else {
                return .failure(.cannotCreateChannelConfig)
            }
            record.channelID = channel.id
            return .success(TestHTTPResponse(status: 201, headers: [("apns-channel-id", channel.id)]))
        case .list:
            let ids = channels.channels(bundleID: bundleID).map { JSONValue.string($0.id) }
            return .success(Self.json(.object(["channels": .array(ids)])))
        case .read, .delete:
            let channelID: String
            switch APNsChannelRules.channelID(of: request) {
            case .failure(let rejection): return .failure(rejection)
            case .success(let value): channelID = value
            }
            guard let channel = channels.channel(id: channelID, bundleID: bundleID) else {
                return .failure(.channelNotRegistered)
            }
            if operation == .delete {
                channels.delete(id: channel.id, bundleID: bundleID)
                return .success(TestHTTPResponse(status: 204))
            }
            return .success(
                Self.json(
                    .object([
                        "message-storage-policy": .number(JSONNumber(channel.messageStoragePolicy.rawValue)),
                        "push-type": .string(APNsChannelRules.channelPushType),
                    ])))
        }
    }

    private static func json(_ value: JSONValue) -> TestHTTPResponse {
        TestHTTPResponse(status: 200, headers: [("content-type", "application/json")], body: value.serialized())
    }
}
