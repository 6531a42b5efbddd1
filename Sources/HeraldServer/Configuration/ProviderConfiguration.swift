import Configuration
import Foundation
import HeraldCore
import HeraldEngine

/// An app's push providers, as configuration names them (files, ids, hosts); ``TransportFactory``
/// turns them into clients.
public struct ProviderConfiguration: Sendable {
    /// APNs credentials and where to reach it.
    public struct APNs: Sendable {
        /// Token auth: the `.p8` key file, its key id and the team id.
        public var keyFile: String?
        public var keyID: String?
        public var teamID: String?
        /// Certificate auth: a `.p12` (with password) or a PEM certificate and key.
        public var p12File: String?
        public var p12Password: String?
        public var certificateFile: String?
        public var certificateKeyFile: String?
        /// The topic (bundle id) for installations registered without one.
        public var topic: String?
        /// `https://host:port` replacing both Apple hosts (a proxy or a mock).
        public var url: String?
        /// PEM trust roots replacing the system's.
        public var caFile: String?
        public var connections: Int

        /// Creates APNs settings.
        public init(
            keyFile: String? = nil, keyID: String? = nil, teamID: String? = nil, p12File: String? = nil,
            p12Password: String? = nil, certificateFile: String? = nil, certificateKeyFile: String? = nil,
            topic: String? = nil, url: String? = nil, caFile: String? = nil, connections: Int = 2
        ) {
            self.keyFile = keyFile
            self.keyID = keyID
            self.teamID = teamID
            self.p12File = p12File
            self.p12Password = p12Password
            self.certificateFile = certificateFile
            self.certificateKeyFile = certificateKeyFile
            self.topic = topic
            self.url = url
            self.caFile = caFile
            self.connections = connections
        }
    }

    /// FCM credentials and where to reach it.
    public struct FCM: Sendable {
        /// The service-account JSON file.
        public var serviceAccountFile: String
        /// `https://host:port` replacing `fcm.googleapis.com`.
        public var url: String?
        /// PEM trust roots for FCM and the token endpoint.
        public var caFile: String?
        public var connections: Int

        /// Creates FCM settings.
        public init(serviceAccountFile: String, url: String? = nil, caFile: String? = nil, connections: Int = 2) {
            self.serviceAccountFile = serviceAccountFile
            self.url = url
            self.caFile = caFile
            self.connections = connections
        }
    }

    public var apns: APNs?
    public var fcm: FCM?
    /// Which outcomes the ledger keeps.
    public var deliveryLog: EngineConfiguration.DeliveryLog

    /// Creates an app's provider settings.
    public init(apns: APNs? = nil, fcm: FCM? = nil, deliveryLog: EngineConfiguration.DeliveryLog = .failures) {
        self.apns = apns
        self.fcm = fcm
        self.deliveryLog = deliveryLog
    }

    /// Reads, under `app.<id>`: `apns.key_file`, `apns.key_id`, `apns.team_id` (token auth) or
    /// `apns.p12_file` + `apns.p12_password`, or `apns.certificate_file` + `apns.certificate_key_file`
    /// (certificate auth); `apns.topic`, `apns.url`, `apns.ca_file`, `apns.connections` (2);
    /// `fcm.service_account_file`, `fcm.url`, `fcm.ca_file`, `fcm.connections` (2);
    /// `delivery_log` (`failures` or `all`; `failures`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(appID: String, reader: ConfigReader) throws {
        let prefix = "app.\(appID)"
        let apnsReader = reader.scoped(to: "apns")
        let keyFile = apnsReader.string(forKey: "key_file")
        let p12File = apnsReader.string(forKey: "p12_file")
        let certificateFile = apnsReader.string(forKey: "certificate_file")
        if keyFile != nil || p12File != nil || certificateFile != nil {
            var apns = APNs(
                keyFile: keyFile, keyID: apnsReader.string(forKey: "key_id"),
                teamID: apnsReader.string(forKey: "team_id"), p12File: p12File,
                p12Password: apnsReader.string(forKey: "p12_password", isSecret: true),
                certificateFile: certificateFile, certificateKeyFile: apnsReader.string(forKey: "certificate_key_file"),
                topic: apnsReader.string(forKey: "topic"), url: apnsReader.string(forKey: "url"),
                caFile: apnsReader.string(forKey: "ca_file"))
            apns.connections = try HeraldConfiguration.integer(
                apnsReader, "connections", default: 2, key: "\(prefix).apns.connections")
            if keyFile != nil, apns.keyID == nil || apns.teamID == nil {
                throw HeraldConfiguration.invalid(
                    "\(prefix).apns.key_id", "and apns.team_id are required with apns.key_file")
            }
            if certificateFile != nil, apns.certificateKeyFile == nil {
                throw HeraldConfiguration.invalid(
                    "\(prefix).apns.certificate_key_file", "is required with apns.certificate_file")
            }
            self.apns = apns
        }
        let fcmReader = reader.scoped(to: "fcm")
        if let file = fcmReader.string(forKey: "service_account_file") {
            var fcm = FCM(
                serviceAccountFile: file, url: fcmReader.string(forKey: "url"),
                caFile: fcmReader.string(forKey: "ca_file"))
            fcm.connections = try HeraldConfiguration.integer(
                fcmReader, "connections", default: 2, key: "\(prefix).fcm.connections")
            self.fcm = fcm
        }
        let log = reader.string(forKey: "delivery_log", default: "failures")
        guard let deliveryLog = EngineConfiguration.DeliveryLog(rawValue: log) else {
            throw HeraldConfiguration.invalid("\(prefix).delivery_log", "must be failures or all")
        }
        self.deliveryLog = deliveryLog
    }
}

extension EngineConfiguration {
    /// Reads `engine.page_size` (2000), `engine.pipeline_depth` (4), `engine.workers` (2), `engine.lease_seconds` (60),
    /// `engine.poll_interval_ms` (1000), `engine.retry.base_ms` (1000), `engine.retry.cap_seconds` (300),
    /// `engine.retry.max_attempts` (5), `engine.max_failures` (5), `engine.cleanup.interval_hours`
    /// (24; 0 turns the job off), `engine.cleanup.invalid_days` (30), `engine.cleanup.failing_days` (7),
    /// `engine.cleanup.unseen_days` (0: off), `engine.cleanup.undelivered_days` (0: off),
    /// `engine.cleanup.retention_days` (30).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(reader: ConfigReader, deliveryLog: [String: DeliveryLog]) throws {
        func integer(_ key: String, _ value: Int, _ range: ClosedRange<Int>) throws -> Int {
            let number = try HeraldConfiguration.integer(reader, key, default: value)
            guard range.contains(number) else {
                throw HeraldConfiguration.invalid(key, "must be \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let cleanupHours = try integer("engine.cleanup.interval_hours", 24, 0...8760)
        let unseenDays = try integer("engine.cleanup.unseen_days", 0, 0...3650)
        let undeliveredDays = try integer("engine.cleanup.undelivered_days", 0, 0...3650)
        self.init(
            pageSize: try integer("engine.page_size", 2000, 1...10_000),
            pipelineDepth: try integer("engine.pipeline_depth", 4, 1...64),
            workers: try integer("engine.workers", 2, 1...64),
            lease: .seconds(try integer("engine.lease_seconds", 60, 1...3600)),
            pollInterval: .milliseconds(try integer("engine.poll_interval_ms", 1000, 10...60_000)),
            retryPolicy: RetryPolicy(
                base: .milliseconds(try integer("engine.retry.base_ms", 1000, 1...3_600_000)),
                cap: .seconds(try integer("engine.retry.cap_seconds", 300, 1...86_400)),
                maxAttempts: try integer("engine.retry.max_attempts", 5, 1...100)),
            maxFailures: try integer("engine.max_failures", 5, 1...1000),
            deliveryLog: deliveryLog,
            cleanupInterval: cleanupHours == 0 ? nil : .seconds(cleanupHours * 3600),
            cleanupPolicy: CleanupPolicy(
                invalidAfter: .seconds(try integer("engine.cleanup.invalid_days", 30, 0...3650) * 86_400),
                failingAfter: .seconds(try integer("engine.cleanup.failing_days", 7, 0...3650) * 86_400),
                unseenAfter: unseenDays == 0 ? nil : .seconds(unseenDays * 86_400),
                undeliveredAfter: undeliveredDays == 0 ? nil : .seconds(undeliveredDays * 86_400),
                notificationRetention: .seconds(try integer("engine.cleanup.retention_days", 30, 0...3650) * 86_400)))
    }
}
