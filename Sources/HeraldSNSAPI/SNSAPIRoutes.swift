import Foundation
import HTTPTypes
import HeraldAPI
import HeraldCore
import HeraldEngine
import HeraldSigV4
import Hummingbird
import Logging
import NIOHTTP1

/// The SNS-compatible API (docs/architecture.md, "Adding a dialect"): the mobile-push subset of AWS SNS's Query API at
/// `POST /sns`, so code written for SNS with an AWS SDK works against Herald by changing its
/// endpoint URL. Requests are SigV4-signed (service `sns`) with an app's access key, which selects
/// the app; answers are SNS's XML, errors SNS's codes and statuses.
///
/// Platform applications, topics and subscriptions are small tables of their own
/// (``SNSAPIStore``); an endpoint is a native installation (its id is the installation id), a
/// topic a native channel, and `Publish` a native notification the engine sends to APNs or FCM.
package struct SNSAPIRoutes: Dialect {
    package static let settingsKey = "sns_api"
    package static let prefix = "/sns"
    /// The API version every request names.
    package static let version = "2010-03-31"
    /// SNS's XML namespace.
    package static let namespace = "http://sns.amazonaws.com/doc/2010-03-31/"
    /// The SigV4 service name.
    package static let service = "sns"
    /// The installation attribute that keeps an endpoint's `CustomUserData`.
    package static let customUserDataAttribute = "sns_custom_user_data"

    /// One authenticated call: the app, its ARNs and the request's parameters.
    package struct Call {
        package var appID: String
        package var settings: SNSAPIConfiguration
        package var arns: SNSARN.Scope
        package var parameters: SNSQueryParameters
        package var requestID: String
    }

    package let store: any DispatchStore & EventStore & SNSAPIStore
    package let dispatcher: Dispatcher
    package let settings: [String: SNSAPIConfiguration]
    /// The app of each access key id.
    package let appsByAccessKey: [String: String]
    package let maxBodyBytes: Int
    package let now: @Sendable () -> Date

    package init(context: DialectContext, settings: [String: SNSAPIConfiguration]) throws {
        store = try context.store((any DispatchStore & EventStore & SNSAPIStore).self, for: Self.self)
        dispatcher = context.dispatcher
        self.settings = settings
        var keys: [String: String] = [:]
        // Sorted, so two apps configured with one key resolve the same way every time.
        for appID in settings.keys.sorted() {
            if let key = settings[appID]?.credentials?.accessKeyID, keys[key] == nil { keys[key] = appID }
        }
        appsByAccessKey = keys
        maxBodyBytes = context.maxBodyBytes
        now = context.now
    }

    package func register(on router: Router<HeraldRequestContext>, table: inout RouteTable) {
        table.on(router.group(), prefix: "", Self.operation, use: handle)
    }

    /// `POST /sns`: verifies the signature, reads `Action` and answers as SNS does.
    @Sendable package func handle(_ request: Request, context: HeraldRequestContext) async -> Response {
        let requestID = UUID().uuidString.lowercased()
        var action: String?
        do {
            let body = try await Self.body(request, limit: maxBodyBytes)
            let call = try authenticate(request, body: body, requestID: requestID)
            action = call.parameters["Action"]
            guard let name = action, let known = Action(rawValue: name) else {
                throw SNSAPIFailure.invalidAction(action)
            }
            if let version = call.parameters["Version"], version != Self.version {
                throw SNSAPIFailure.invalidAction(name)
            }
            let result = try await perform(known, call)
            context.logger.info(
                "sns api call", metadata: ["herald.action": "\(name)", "herald.app": "\(call.appID)"])
            return SNSXML.success(action: name, result: result, requestID: requestID)
        } catch {
            let failure = SNSAPIFailure(error)
            var metadata: Logger.Metadata = [
                "herald.action": "\(action ?? "none")", "herald.error": "\(failure.code)",
            ]
            if let error = error as? HeraldError { metadata["herald.cause"] = "\(error.code)" }
            if failure.code == "InternalError" {
                metadata["herald.cause"] = "\(type(of: error))"
                context.logger.error("sns api call failed", metadata: metadata)
            } else {
                context.logger.info("sns api call refused", metadata: metadata)
            }
            return failure.response(requestID: requestID)
        }
    }

    /// The request body, at most `limit` bytes.
    private static func body(_ request: Request, limit: Int) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        for try await buffer in request.body {
            guard bytes.count + buffer.readableBytes <= limit else {
                throw SNSAPIFailure(
                    type: "Sender", code: "RequestEntityTooLarge", status: .contentTooLarge,
                    message: "Request body is larger than \(limit) bytes.")
            }
            bytes.append(contentsOf: buffer.readableBytesView)
        }
        return bytes
    }

    /// Verifies the request's SigV4 signature with the secret of the access key it names, which
    /// selects the app.
    /// - Throws: `SNSAPIFailure` with AWS's code: `InvalidClientTokenId` for an unknown key,
    ///   `SignatureDoesNotMatch` for a wrong signature, region or stale date.
    private func authenticate(_ request: Request, body: [UInt8], requestID: String) throws -> Call {
        var headers = HTTPHeaders()
        for field in request.headers { headers.add(name: field.name.canonicalName, value: field.value) }
        // HTTP/1.1's Host is the request's authority in HTTPTypes, not a header field.
        if headers["host"].isEmpty, let authority = request.head.authority {
            headers.add(name: "host", value: authority)
        }
        let signed = SigV4Request(
            method: request.method.rawValue, target: request.uri.description, headers: headers, body: body)
        let authorization = try SigV4Authorization(request: signed)
        guard let appID = appsByAccessKey[authorization.accessKeyID], let settings = settings[appID],
            let credentials = settings.credentials
        else { throw SNSAPIFailure.invalidClientTokenID() }
        let verifier = SigV4Verifier(service: Self.service, region: settings.region, now: now)
        try verifier.verify(signed, authorization: authorization, secretAccessKey: credentials.secretAccessKey)
        let parameters = SNSQueryParameters(form: String(decoding: body, as: UTF8.self))
        try parameters.requireXMLText()
        return Call(
            appID: appID, settings: settings,
            arns: SNSARN.Scope(region: settings.region, accountID: settings.accountID),
            parameters: parameters, requestID: requestID)
    }

    /// The actions served.
    package enum Action: String, CaseIterable {
        case createPlatformApplication = "CreatePlatformApplication"
        case getPlatformApplicationAttributes = "GetPlatformApplicationAttributes"
        case setPlatformApplicationAttributes = "SetPlatformApplicationAttributes"
        case listPlatformApplications = "ListPlatformApplications"
        case deletePlatformApplication = "DeletePlatformApplication"
        case createPlatformEndpoint = "CreatePlatformEndpoint"
        case getEndpointAttributes = "GetEndpointAttributes"
        case setEndpointAttributes = "SetEndpointAttributes"
        case deleteEndpoint = "DeleteEndpoint"
        case listEndpointsByPlatformApplication = "ListEndpointsByPlatformApplication"
        case createTopic = "CreateTopic"
        case deleteTopic = "DeleteTopic"
        case listTopics = "ListTopics"
        case subscribe = "Subscribe"
        case unsubscribe = "Unsubscribe"
        case listSubscriptionsByTopic = "ListSubscriptionsByTopic"
        case publish = "Publish"
    }

    /// Runs an action; returns the inside of its `Result` element (nil: none).
    private func perform(_ action: Action, _ call: Call) async throws -> String? {
        switch action {
        case .createPlatformApplication: try await createPlatformApplication(call)
        case .getPlatformApplicationAttributes: try await getPlatformApplicationAttributes(call)
        case .setPlatformApplicationAttributes: try await setPlatformApplicationAttributes(call)
        case .listPlatformApplications: try await listPlatformApplications(call)
        case .deletePlatformApplication: try await deletePlatformApplication(call)
        case .createPlatformEndpoint: try await createPlatformEndpoint(call)
        case .getEndpointAttributes: try await getEndpointAttributes(call)
        case .setEndpointAttributes: try await setEndpointAttributes(call)
        case .deleteEndpoint: try await deleteEndpoint(call)
        case .listEndpointsByPlatformApplication: try await listEndpointsByPlatformApplication(call)
        case .createTopic: try await createTopic(call)
        case .deleteTopic: try await deleteTopic(call)
        case .listTopics: try await listTopics(call)
        case .subscribe: try await subscribe(call)
        case .unsubscribe: try await unsubscribe(call)
        case .listSubscriptionsByTopic: try await listSubscriptionsByTopic(call)
        case .publish: try await publish(call)
        }
    }
}

extension SNSAPIRoutes {
    /// SNS refuses a signature with `403` (`InvalidClientTokenId`, `SignatureDoesNotMatch`, `IncompleteSignature`).
    package static func refusesCredentials(path: String, status: HTTPResponse.Status) -> Bool {
        path == prefix && status == .forbidden
    }

    /// `429 Throttled`, as SNS throttles (the AWS SDKs retry it with backoff).
    package static func tooManyRefusedCredentials(path: String, retryAfter: Int) -> Response? {
        guard path == prefix else { return nil }
        return SNSAPIFailure(
            type: "Sender", code: "Throttled", status: .tooManyRequests,
            message: "Too many requests with refused credentials from this address; retry in \(retryAfter) seconds."
        ).response(requestID: UUID().uuidString.lowercased())
    }
}

extension SNSAPIRoutes {
    package static let name = "SNS API"
    package static let settingsTitle = "SNS-compatible API"
    package static var declaredSettings: [any DeclaredSetting] { SNSAPIConfiguration.Settings.all }
    package static var routesSummary: String { Self.prefix }

    package static func status(_ settings: SNSAPIConfiguration?) -> (enabled: Bool, detail: String) {
        guard let settings, settings.credentials != nil else { return (false, "no access key configured") }
        return (true, "region \(settings.region), account \(settings.accountID)")
    }
}
