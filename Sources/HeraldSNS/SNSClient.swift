import AsyncHTTPClient
import Foundation
import HeraldCore
import HeraldSigV4
import Logging
import NIOCore
import NIOHTTP1

/// An AWS SNS client for mobile push: platform applications, platform endpoints and `Publish`,
/// over the Query API (`POST /`, form-encoded, XML answers), each request signed with ``SigV4``
/// for the service `sns`. Calls are few (registration, one publish per push), so they go through
/// one shared AsyncHTTPClient rather than Herald's HTTP/2 pool.
public final class SNSClient: Sendable {
    /// Where the client connects and how it signs.
    public struct Configuration: Sendable {
        /// The AWS region (`us-east-1`): the credential scope and the default endpoint.
        public var region: String
        /// The access key; nil reads `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and
        /// `AWS_SESSION_TOKEN` when the client is created.
        public var credentials: AWSCredentials?
        /// The SNS endpoint URL; nil is `https://sns.<region>.amazonaws.com` (`.amazonaws.com.cn`
        /// in China). Tests point it at an SNS-compatible server (`http://127.0.0.1:<port>`).
        public var endpoint: String?
        /// How long one call may take.
        public var requestTimeout: TimeAmount

        /// Creates a configuration.
        public init(
            region: String, credentials: AWSCredentials? = nil, endpoint: String? = nil,
            requestTimeout: TimeAmount = .seconds(30)
        ) {
            self.region = region
            self.credentials = credentials
            self.endpoint = endpoint
            self.requestTimeout = requestTimeout
        }

        /// The endpoint URL the client uses.
        public var endpointURL: String {
            endpoint ?? "https://sns.\(region).amazonaws.com\(region.hasPrefix("cn-") ? ".cn" : "")"
        }
    }

    /// An endpoint created or adopted by ``createOrAdoptPlatformEndpoint(platformApplicationARN:token:customUserData:)``.
    public struct Registration: Sendable, Hashable {
        /// The endpoint's ARN.
        public var endpointARN: String
        /// Whether SNS already had an endpoint for the token, whose attributes were then updated.
        public var adopted: Bool

        /// Creates a registration.
        public init(endpointARN: String, adopted: Bool) {
            self.endpointARN = endpointARN
            self.adopted = adopted
        }
    }

    /// The largest answer read; SNS's are a few hundred bytes.
    static let maxResponseBytes = 1 << 20

    private let signer: SigV4
    private let url: String
    private let host: String
    private let path: String
    private let requestTimeout: TimeAmount
    private let httpClient: HTTPClient
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// Creates a client.
    /// - Parameters:
    ///   - environment: where credentials are read from when the configuration has none.
    ///   - now: the clock that dates signatures.
    /// - Throws: `SNSError` `missingCredentials` when none are configured or in the environment,
    ///   `invalidEndpointURL` when the endpoint is not an http(s) URL with a host.
    public init(
        configuration: Configuration, httpClient: HTTPClient = .shared, logger: Logger = Logger(label: "herald.sns"),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        now: @escaping @Sendable () -> Date = Date.init
    ) throws(SNSError) {
        guard let credentials = configuration.credentials ?? AWSCredentials(environment: environment) else {
            throw .missingCredentials()
        }
        let endpoint = configuration.endpointURL
        guard let components = URLComponents(string: endpoint), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let hostName = components.host, !hostName.isEmpty
        else {
            throw .invalidEndpointURL(endpoint)
        }
        let bracketed = hostName.contains(":") ? "[\(hostName)]" : hostName
        let defaultPort = scheme == "https" ? 443 : 80
        host = components.port.map { $0 == defaultPort ? bracketed : "\(bracketed):\($0)" } ?? bracketed
        path = components.path.isEmpty ? "/" : components.path
        url = "\(scheme)://\(host)\(path)"
        signer = SigV4(credentials: credentials, region: configuration.region, service: "sns")
        requestTimeout = configuration.requestTimeout
        self.httpClient = httpClient
        self.logger = logger
        self.now = now
    }

    // MARK: - Platform applications

    /// Creates a platform application (`CreatePlatformApplication`): the credentials SNS uses
    /// towards APNs or FCM.
    /// - Parameter attributes: `PlatformCredential`, `PlatformPrincipal`, `ApplePlatformTeamID`…
    /// - Returns: the application's ARN.
    /// - Throws: `SNSError`.
    public func createPlatformApplication(
        name: String, platform: SNSPlatform, attributes: [String: String] = [:]
    ) async throws(SNSError) -> String {
        let result = try await call(
            "CreatePlatformApplication",
            [("Name", name), ("Platform", platform.key)] + SNSQuery.mapEntries("Attributes", attributes))
        return try Self.text("PlatformApplicationArn", in: result, action: "CreatePlatformApplication")
    }

    // MARK: - Platform endpoints

    /// Creates an endpoint for a device token (`CreatePlatformEndpoint`). SNS answers with the
    /// existing endpoint when one holds the token with the same attributes, and refuses with
    /// `InvalidParameter` when its attributes differ: see ``SNSError/existingEndpointARN`` and
    /// ``createOrAdoptPlatformEndpoint(platformApplicationARN:token:customUserData:)``.
    /// - Returns: the endpoint's ARN.
    /// - Throws: `SNSError`.
    public func createPlatformEndpoint(
        platformApplicationARN: String, token: String, customUserData: String? = nil,
        attributes: SNSEndpointAttributes = SNSEndpointAttributes()
    ) async throws(SNSError) -> String {
        var parameters = [("PlatformApplicationArn", platformApplicationARN), ("Token", token)]
        if let customUserData { parameters.append(("CustomUserData", customUserData)) }
        parameters += SNSQuery.mapEntries("Attributes", attributes.wire)
        let result = try await call("CreatePlatformEndpoint", parameters)
        return try Self.text("EndpointArn", in: result, action: "CreatePlatformEndpoint")
    }

    /// Creates the endpoint for a token, or adopts the one SNS already has for it: when SNS refuses
    /// a second endpoint with other attributes, the existing one gets the token, `Enabled=true` and
    /// the custom user data, as AWS's "best practices for managing mobile platform endpoints" do.
    /// - Throws: `SNSError` from either call.
    public func createOrAdoptPlatformEndpoint(
        platformApplicationARN: String, token: String, customUserData: String? = nil
    ) async throws(SNSError) -> Registration {
        do throws(SNSError) {
            let arn = try await createPlatformEndpoint(
                platformApplicationARN: platformApplicationARN, token: token, customUserData: customUserData)
            return Registration(endpointARN: arn, adopted: false)
        } catch {
            guard let arn = error.existingEndpointARN else { throw error }
            try await setEndpointAttributes(
                endpointARN: arn,
                SNSEndpointAttributes(token: token, enabled: true, customUserData: customUserData))
            return Registration(endpointARN: arn, adopted: true)
        }
    }

    /// Sets an endpoint's attributes (`SetEndpointAttributes`): a new token, `Enabled=true` after
    /// the app registered again, custom user data. Only the attributes given change.
    /// - Throws: `SNSError` (`NotFound` when the endpoint was deleted).
    public func setEndpointAttributes(endpointARN: String, _ attributes: SNSEndpointAttributes) async throws(SNSError) {
        _ = try await call(
            "SetEndpointAttributes", [("EndpointArn", endpointARN)] + SNSQuery.mapEntries("Attributes", attributes.wire)
        )
    }

    /// An endpoint's attributes (`GetEndpointAttributes`).
    /// - Throws: `SNSError` (`NotFound` when the endpoint was deleted).
    public func getEndpointAttributes(endpointARN: String) async throws(SNSError) -> SNSEndpointAttributes {
        let result = try await call("GetEndpointAttributes", [("EndpointArn", endpointARN)])
        return SNSEndpointAttributes(wire: SNSQuery.attributes(in: result))
    }

    /// A platform application's attributes (`GetPlatformApplicationAttributes`): a signed, read-only
    /// call that proves the credentials and the ARN (`herald config check --connect`).
    /// - Throws: `SNSError` (`NotFound` for an unknown application, `AuthorizationError`…).
    public func getPlatformApplicationAttributes(applicationARN: String) async throws(SNSError) -> [String: String] {
        let result = try await call("GetPlatformApplicationAttributes", [("PlatformApplicationArn", applicationARN)])
        return SNSQuery.attributes(in: result)
    }

    /// Deletes an endpoint (`DeleteEndpoint`); deleting one that is gone succeeds, as in SNS.
    /// - Throws: `SNSError`.
    public func deleteEndpoint(endpointARN: String) async throws(SNSError) {
        _ = try await call("DeleteEndpoint", [("EndpointArn", endpointARN)])
    }

    // MARK: - Topics

    /// Creates a topic (`CreateTopic`), or finds the one of that name: SNS answers a repeated
    /// `CreateTopic` with the existing topic's ARN.
    /// - Returns: the topic's ARN.
    /// - Throws: `SNSError`.
    public func createTopic(name: String) async throws(SNSError) -> String {
        let result = try await call("CreateTopic", [("Name", name)])
        return try Self.text("TopicArn", in: result, action: "CreateTopic")
    }

    /// Subscribes a platform endpoint to a topic (`Subscribe` with protocol `application`). SNS
    /// answers a repeated subscription with the existing one's ARN, so this also finds it.
    /// - Returns: the subscription's ARN.
    /// - Throws: `SNSError` (`NotFound` when the topic does not exist).
    public func subscribe(topicARN: String, endpointARN: String) async throws(SNSError) -> String {
        let result = try await call(
            "Subscribe", [("TopicArn", topicARN), ("Protocol", "application"), ("Endpoint", endpointARN)])
        return try Self.text("SubscriptionArn", in: result, action: "Subscribe")
    }

    /// The endpoints subscribed to a topic with protocol `application`, by subscription ARN
    /// (`ListSubscriptionsByTopic`, every page).
    /// - Throws: `SNSError` (`NotFound` when the topic does not exist).
    public func applicationSubscriptions(topicARN: String) async throws(SNSError) -> [String: String] {
        var subscriptions: [String: String] = [:]
        var next: String?
        repeat {
            var parameters = [("TopicArn", topicARN)]
            if let next { parameters.append(("NextToken", next)) }
            let result = try await call("ListSubscriptionsByTopic", parameters)
            for member in result?.child("Subscriptions")?.children ?? []
            where member.text(of: "Protocol") == "application" {
                if let arn = member.text(of: "SubscriptionArn"), let endpoint = member.text(of: "Endpoint") {
                    subscriptions[arn] = endpoint
                }
            }
            next = result?.text(of: "NextToken").flatMap { $0.isEmpty ? nil : $0 }
        } while next != nil
        return subscriptions
    }

    /// Deletes a subscription (`Unsubscribe`).
    /// - Throws: `SNSError`.
    public func unsubscribe(subscriptionARN: String) async throws(SNSError) {
        _ = try await call("Unsubscribe", [("SubscriptionArn", subscriptionARN)])
    }

    // MARK: - Publish

    /// Publishes a message (`Publish` with `MessageStructure=json`) to an endpoint or a topic.
    /// ``SNSResponseClassifier`` turns the result into a delivery outcome.
    /// - Returns: SNS's `MessageId`.
    /// - Throws: `SNSError`: `messageTooLarge` before sending when the message is over 256 KB,
    ///   otherwise SNS's answer (`EndpointDisabled`, `InvalidParameter`, `Throttling`…).
    public func publish(
        _ message: SNSMessage, to target: SNSPublishTarget, attributes: [SNSMessageAttribute] = []
    ) async throws(SNSError) -> String {
        let text = message.text
        guard text.utf8.count <= SNSMessage.maxBytes else { throw .messageTooLarge(size: text.utf8.count) }
        var parameters: [(String, String)]
        switch target {
        case .endpoint(let arn): parameters = [("TargetArn", arn)]
        case .topic(let arn): parameters = [("TopicArn", arn)]
        }
        parameters += [("Message", text), ("MessageStructure", "json")]
        parameters += SNSQuery.messageAttributeEntries(attributes)
        let result = try await call("Publish", parameters)
        return try Self.text("MessageId", in: result, action: "Publish")
    }

    // MARK: - The wire

    /// The signed request for one action, as it goes out.
    func request(action: String, parameters: [(String, String)]) -> SigV4Request {
        var headers = HTTPHeaders()
        headers.add(name: "host", value: host)
        headers.add(name: "content-type", value: SNSQuery.contentType)
        var request = SigV4Request(
            method: "POST", path: path, headers: headers,
            body: Array(SNSQuery.body(action: action, parameters: parameters).utf8))
        signer.sign(&request, date: now())
        return request
    }

    private func call(_ action: String, _ parameters: [(String, String)]) async throws(SNSError) -> SNSXMLElement? {
        let signed = request(action: action, parameters: parameters)
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers = signed.headers
        request.body = .bytes(ByteBuffer(bytes: signed.body))
        let status: Int
        let body: [UInt8]
        do {
            let response = try await httpClient.execute(request, timeout: requestTimeout)
            status = Int(response.status.code)
            body = Array(buffer: try await response.body.collect(upTo: Self.maxResponseBytes))
        } catch {
            logger.debug("SNS call failed", metadata: ["sns.action": "\(action)", "sns.error": "\(error)"])
            throw .unreachable("\(error)")
        }
        let result = SNSQuery.result(action: action, status: status, body: body)
        if case .failure(let error) = result {
            logger.debug(
                "SNS refused a call",
                metadata: [
                    "sns.action": "\(action)", "sns.status": "\(status)", "sns.code": "\(error.awsCode ?? "-")",
                    "sns.request_id": "\(error.requestID ?? "-")",
                ])
        }
        return try result.get()
    }

    private static func text(_ name: String, in result: SNSXMLElement?, action: String) throws(SNSError) -> String {
        guard let value = result?.text(of: name), !value.isEmpty else {
            throw .invalidResponse(status: 200, detail: "no \(name) in \(action)Result")
        }
        return value
    }
}
