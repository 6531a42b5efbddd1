import Foundation
import HeraldAPI
import HeraldCore
import HeraldEngine

/// Platform applications and their endpoints (installations).
extension SNSAPIRoutes {
    /// SNS's platforms and where each delivers natively.
    package enum PlatformKind: String, CaseIterable {
        case apns = "APNS"
        case apnsSandbox = "APNS_SANDBOX"
        case gcm = "GCM"

        package var platform: Platform { self == .gcm ? .android : .ios }
        package var service: PushService { self == .gcm ? .fcm : .apns }
        package var environment: PushEnvironment { self == .apnsSandbox ? .sandbox : .production }
    }

    /// Attributes that hold credentials: accepted and dropped, never stored (Herald delivers with
    /// the app's own provider configuration, so it has no use for them).
    package static let credentialAttributes: Set<String> = ["PlatformCredential", "PlatformPrincipal"]

    /// A platform application's attributes without its credentials.
    package static func storable(_ attributes: [String: String]) -> [String: String] {
        attributes.filter { !credentialAttributes.contains($0.key) }
    }

    // MARK: Platform applications

    package func createPlatformApplication(_ call: Call) async throws -> String? {
        let name = try call.parameters.required("Name")
        guard Self.isValidName(name) else {
            throw SNSAPIFailure.invalidParameter(
                "Invalid parameter: Name Reason: must contain only alphanumeric characters, hyphens, underscores "
                    + "and periods, and be 1 to 256 characters long")
        }
        let raw = try call.parameters.required("Platform")
        guard let platform = PlatformKind(rawValue: raw) else {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: Platform Reason: \(raw) is not supported")
        }
        if let existing = try await store.snsPlatformApplication(appID: call.appID, name: name),
            existing.platform != platform.rawValue
        {
            throw SNSAPIFailure.invalidParameter(
                "Invalid parameter: Name Reason: An application with the name \(name) exists for platform "
                    + existing.platform)
        }
        let stored = try await store.putSNSPlatformApplication(
            SNSPlatformApplication(
                appID: call.appID, name: name, platform: platform.rawValue,
                attributes: Self.storable(call.parameters.map("Attributes")), createdAt: now()))
        let arn = call.arns.string(.application(platform: stored.platform, name: stored.name))
        return SNSXML.element("PlatformApplicationArn", arn)
    }

    package func getPlatformApplicationAttributes(_ call: Call) async throws -> String? {
        let application = try await platformApplication(call, parameter: "PlatformApplicationArn")
        return SNSXML.entries("Attributes", Self.visibleAttributes(application))
    }

    package func setPlatformApplicationAttributes(_ call: Call) async throws -> String? {
        var application = try await platformApplication(call, parameter: "PlatformApplicationArn")
        application.attributes.merge(Self.storable(call.parameters.map("Attributes"))) { $1 }
        _ = try await store.putSNSPlatformApplication(application)
        return nil
    }

    package func listPlatformApplications(_ call: Call) async throws -> String? {
        let page = try await store.snsPlatformApplications(
            appID: call.appID, after: try call.parameters.pageStart(), limit: SNSQueryParameters.pageSize + 1)
        let members = page.prefix(SNSQueryParameters.pageSize).map { application in
            "<member>"
                + SNSXML.element(
                    "PlatformApplicationArn",
                    call.arns.string(.application(platform: application.platform, name: application.name)))
                + SNSXML.entries("Attributes", Self.visibleAttributes(application)) + "</member>"
        }
        return "<PlatformApplications>\(members.joined())</PlatformApplications>"
            + SNSQueryParameters.nextToken(after: page.map(\.name))
    }

    package func deletePlatformApplication(_ call: Call) async throws -> String? {
        // Like SNS, deleting what is not there succeeds.
        let arn = try call.parameters.required("PlatformApplicationArn")
        guard case .application(_, let name)? = call.arns.parse(arn) else {
            throw SNSAPIFailure.invalidParameter(
                "Invalid parameter: PlatformApplicationArn Reason: \(arn) is not valid")
        }
        _ = try await store.deleteSNSPlatformApplication(appID: call.appID, name: name)
        return nil
    }

    /// The platform application an ARN parameter names.
    /// - Throws: `InvalidParameter` for a malformed ARN, `NotFound` for an unknown one.
    package func platformApplication(_ call: Call, parameter: String) async throws -> SNSPlatformApplication {
        let arn = try call.parameters.required(parameter)
        guard case .application(let platform, let name)? = call.arns.parse(arn) else {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: \(parameter) Reason: \(arn) is not valid")
        }
        guard let application = try await store.snsPlatformApplication(appID: call.appID, name: name),
            application.platform == platform
        else { throw SNSAPIFailure.notFound("PlatformApplication does not exist") }
        return application
    }

    package static func visibleAttributes(_ application: SNSPlatformApplication) -> [String: String] {
        var attributes = application.attributes.filter { !credentialAttributes.contains($0.key) }
        attributes["Enabled"] = attributes["Enabled"] ?? "true"
        return attributes
    }

    /// SNS's names: 1 to 256 letters, digits, `-`, `_` and `.`.
    package static func isValidName(_ name: String) -> Bool {
        (1...256).contains(name.count)
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
                    || $0 == "_" || $0 == "."
            }
    }

    // MARK: Endpoints

    package func createPlatformEndpoint(_ call: Call) async throws -> String? {
        let application = try await platformApplication(call, parameter: "PlatformApplicationArn")
        guard let kind = PlatformKind(rawValue: application.platform) else { throw SNSAPIFailure.internalError() }
        let token = try call.parameters.required("Token")
        try Self.validate(token: token, kind: kind)
        var attributes = call.parameters.map("Attributes")
        if let data = call.parameters["CustomUserData"] { attributes["CustomUserData"] = data }
        let customUserData = attributes["CustomUserData"]
        if let customUserData, customUserData.utf8.count > 2048 {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: CustomUserData Reason: longer than 2048 bytes")
        }
        let enabled = try attributes["Enabled"].map { try Self.bool($0, name: "Enabled") }

        if let existing = try await store.installation(appID: call.appID, service: kind.service, token: token) {
            let arn = call.arns.string(
                .endpoint(platform: kind.rawValue, application: application.name, id: existing.id))
            // As SNS: the same token with the same attributes is the same endpoint; anything else
            // is refused rather than changed.
            guard existing.attributes[Self.applicationAttribute] == .string(application.name),
                existing.attributes[Self.customUserDataAttribute]?.snsText == customUserData,
                enabled == nil || enabled == existing.valid
            else {
                throw SNSAPIFailure.invalidParameter(
                    "Invalid parameter: Token Reason: Endpoint \(arn) already exists with the same Token, but "
                        + "different attributes.")
            }
            return SNSXML.element("EndpointArn", arn)
        }
        var profileAttributes: [String: JSONValue] = [Self.applicationAttribute: .string(application.name)]
        if let customUserData { profileAttributes[Self.customUserDataAttribute] = .string(customUserData) }
        try InstallationRules.validateAttributes(profileAttributes)
        var registration = InstallationRegistration(
            platform: kind.platform, service: kind.service, environment: kind.environment, token: .device(token))
        registration.attributes = profileAttributes
        // Token-based APNs applications name their bundle id; certificate ones leave the app's topic.
        if kind.service == .apns, let bundle = application.attributes["ApplePlatformBundleID"], !bundle.isEmpty {
            registration.bundleID = bundle
        }
        let at = now()
        var installation = try await dispatcher.registrations.register(registration, appID: call.appID, now: at)
            .installation
        if enabled == false {
            let registered = installation
            installation.valid = false
            installation =
                try await dispatcher.registrations.update(installation, from: registered, now: at) ?? installation
        }
        return SNSXML.element(
            "EndpointArn",
            call.arns.string(.endpoint(platform: kind.rawValue, application: application.name, id: installation.id)))
    }

    package func getEndpointAttributes(_ call: Call) async throws -> String? {
        let (installation, _) = try await endpoint(call, parameter: "EndpointArn")
        return SNSXML.entries("Attributes", Self.endpointAttributes(installation))
    }

    package func setEndpointAttributes(_ call: Call) async throws -> String? {
        var (installation, kind) = try await endpoint(call, parameter: "EndpointArn")
        let previous = installation
        let attributes = call.parameters.map("Attributes")
        if attributes.isEmpty { throw SNSAPIFailure.invalidParameter("Invalid parameter: Attributes") }
        for (name, value) in attributes {
            switch name {
            case "Token":
                try Self.validate(token: value, kind: kind)
                // As SNS: a new token does not re-enable the endpoint; Enabled=true does.
                installation.token = .device(value)
            case "Enabled":
                let enabled = try Self.bool(value, name: "Enabled")
                installation.valid = enabled
                if enabled {
                    installation.failureCount = 0
                    installation.invalidatedAt = nil
                }
            case "CustomUserData":
                guard value.utf8.count <= 2048 else {
                    throw SNSAPIFailure.invalidParameter(
                        "Invalid parameter: CustomUserData Reason: longer than 2048 bytes")
                }
                installation.attributes[Self.customUserDataAttribute] = value.isEmpty ? nil : .string(value)
            default:
                throw SNSAPIFailure.invalidParameter(
                    "Invalid parameter: Attributes Reason: Invalid attribute name: \(name)")
            }
        }
        guard try await dispatcher.registrations.update(installation, from: previous, now: now()) != nil else {
            throw SNSAPIFailure.notFound("Endpoint does not exist")
        }
        return nil
    }

    package func deleteEndpoint(_ call: Call) async throws -> String? {
        // Like SNS, deleting what is not there succeeds.
        let arn = try call.parameters.required("EndpointArn")
        guard case .endpoint(_, let application, let id)? = call.arns.parse(arn) else {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: EndpointArn Reason: \(arn) is not valid")
        }
        if let installation = try await store.installation(appID: call.appID, id: id),
            installation.attributes[Self.applicationAttribute] == .string(application)
        {
            _ = try await dispatcher.registrations.delete(installation)
        }
        return nil
    }

    package func listEndpointsByPlatformApplication(_ call: Call) async throws -> String? {
        let application = try await platformApplication(call, parameter: "PlatformApplicationArn")
        let page = try await store.snsEndpoints(
            appID: call.appID, application: application.name, after: try call.parameters.pageStart(),
            limit: SNSQueryParameters.pageSize + 1)
        let members = page.prefix(SNSQueryParameters.pageSize).map { installation in
            "<member>"
                + SNSXML.element(
                    "EndpointArn",
                    call.arns.string(
                        .endpoint(platform: application.platform, application: application.name, id: installation.id)))
                + SNSXML.entries("Attributes", Self.endpointAttributes(installation)) + "</member>"
        }
        return "<Endpoints>\(members.joined())</Endpoints>" + SNSQueryParameters.nextToken(after: page.map(\.id))
    }

    /// The endpoint (installation) an ARN parameter names, with its platform.
    /// - Throws: `InvalidParameter` for a malformed ARN, `NotFound` for an unknown one.
    package func endpoint(_ call: Call, parameter: String) async throws -> (Installation, PlatformKind) {
        let arn = try call.parameters.required(parameter)
        guard case .endpoint(let platform, let application, let id)? = call.arns.parse(arn),
            let kind = PlatformKind(rawValue: platform)
        else {
            throw SNSAPIFailure.invalidParameter("Invalid parameter: \(parameter) Reason: \(arn) is not valid")
        }
        guard id.count <= NotificationTarget.maxInstallationIDLength,
            let installation = try await store.installation(appID: call.appID, id: id),
            installation.attributes[Self.applicationAttribute] == .string(application),
            installation.service == kind.service
        else { throw SNSAPIFailure.notFound("Endpoint does not exist") }
        return (installation, kind)
    }

    /// `Token`, `Enabled` (the installation is valid) and `CustomUserData`.
    package static func endpointAttributes(_ installation: Installation) -> [String: String] {
        var attributes = ["Token": installation.token.identity, "Enabled": installation.valid ? "true" : "false"]
        if let data = installation.attributes[customUserDataAttribute]?.snsText {
            attributes["CustomUserData"] = data
        }
        return attributes
    }

    package static func validate(token: String, kind: PlatformKind) throws(SNSAPIFailure) {
        do {
            switch kind.service {
            case .apns: try InstallationRules.validateAPNsToken(token, field: "Token")
            default: try InstallationRules.validateFCMToken(token, field: "Token")
            }
        } catch {
            throw .invalidParameter("Invalid parameter: Token Reason: \(error.message)")
        }
    }

    package static func bool(_ text: String, name: String) throws(SNSAPIFailure) -> Bool {
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default: throw .invalidParameter("Invalid parameter: \(name) Reason: must be true or false")
        }
    }

    /// The installation attribute naming an endpoint's platform application.
    package static var applicationAttribute: String { Installation.snsPlatformApplicationAttribute }
}

extension JSONValue {
    /// The text of a string value.
    package var snsText: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
