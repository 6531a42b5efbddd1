import CoreMetrics
import Foundation
import HeraldAPI
import HeraldCore
import Logging
import NIOSSL

/// When the apps' APNs certificates expire (`.p8` keys, FCM service accounts and VAPID keys do not):
/// exported as `herald_credential_expiry_timestamp_seconds{app,provider}` and warned about from
/// ``warningLead`` before, so an operator replaces the certificate before pushes stop.
public enum CredentialExpiry {
    /// How long before expiry the warning starts: four weeks.
    public static let warningLead: TimeInterval = 28 * 86_400

    /// One credential's expiry.
    public struct Entry: Sendable, Equatable {
        public var appID: String
        public var provider: String
        public var expiresAt: Date
    }

    /// The expiry of every APNs certificate the configuration names (unreadable ones are skipped:
    /// loading the configuration already refused those).
    public static func entries(_ configuration: HeraldConfiguration) -> [Entry] {
        configuration.providers.sorted { $0.key < $1.key }.compactMap { appID, providers in
            guard let apns = providers.apns, let expiry = certificateExpiry(apns) else { return nil }
            return Entry(appID: appID, provider: "apns", expiresAt: expiry)
        }
    }

    /// Records each expiry as a gauge and logs a warning for each one within ``warningLead``
    /// (an error once expired).
    /// - Returns: The entries that warned.
    @discardableResult
    public static func check(_ configuration: HeraldConfiguration, now: Date, logger: Logger) -> [Entry] {
        var warned: [Entry] = []
        for entry in entries(configuration) {
            Gauge(
                label: "herald_credential_expiry_timestamp_seconds",
                dimensions: [("app", entry.appID), ("provider", entry.provider)]
            ).record(entry.expiresAt.timeIntervalSince1970)
            let left = entry.expiresAt.timeIntervalSince(now)
            guard left < warningLead else { continue }
            warned.append(entry)
            let metadata: Logger.Metadata = [
                "herald.app": "\(entry.appID)", "herald.provider": "\(entry.provider)",
                "herald.expires_at": "\(entry.expiresAt.formatted(.iso8601))",
                "herald.days_left": "\(Int((left / 86_400).rounded(.down)))",
            ]
            if left <= 0 {
                logger.error(
                    "APNs certificate expired: pushes through it fail until it is replaced", metadata: metadata)
            } else {
                logger.warning("APNs certificate expires soon: replace it and reload (SIGHUP)", metadata: metadata)
            }
        }
        return warned
    }

    private static func certificateExpiry(_ settings: ProviderConfiguration.APNs) -> Date? {
        let certificate: NIOSSLCertificate?
        if let p12 = settings.p12File {
            certificate = try? NIOSSLPKCS12Bundle(file: p12, passphrase: Array((settings.p12Password ?? "").utf8))
                .certificateChain.first
        } else if let file = settings.certificateFile {
            certificate = try? NIOSSLCertificate.fromPEMFile(file).first
        } else {
            certificate = nil
        }
        return certificate.map { Date(timeIntervalSince1970: TimeInterval($0.notValidAfter)) }
    }
}
