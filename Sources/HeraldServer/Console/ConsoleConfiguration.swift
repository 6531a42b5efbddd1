import Configuration
import HeraldCore

/// The web console's settings (`console.*`).
public struct ConsoleConfiguration: Sendable, Equatable {
    /// How long a sign-in lasts, in hours.
    public var sessionHours: Int
    /// Whether the session cookie carries `Secure` (sent over HTTPS only). Browsers treat
    /// `http://127.0.0.1` and `http://localhost` as secure, so the default works locally; turn it off
    /// only to reach the console over plain HTTP on another address.
    public var secureCookie: Bool
    /// Failed sign-ins a client address may make at once before it waits (`429`); it regains one every
    /// `signInWindowSeconds / signInAttempts`.
    public var signInAttempts: Int
    /// The time in which the failed sign-ins allowance refills, in seconds.
    public var signInWindowSeconds: Int

    /// The allowed session lifetimes, in hours.
    public static let sessionHoursRange = 1...720

    /// Creates the settings; the defaults are a 12-hour session, a `Secure` cookie and 10 failed
    /// sign-ins per address per 5 minutes.
    public init(
        sessionHours: Int = 12, secureCookie: Bool = true, signInAttempts: Int = 10, signInWindowSeconds: Int = 300
    ) {
        self.sessionHours = sessionHours
        self.secureCookie = secureCookie
        self.signInAttempts = signInAttempts
        self.signInWindowSeconds = signInWindowSeconds
    }

    /// Reads `console.session_hours` (int, 1 to 720; `12`), `console.secure_cookie` (boolean; `true`),
    /// `console.sign_in_attempts` (int, 1 to 1000; `10`) and `console.sign_in_window_seconds` (int, 1 to
    /// 86400; `300`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(reader: ConfigReader) throws {
        sessionHours = try HeraldConfiguration.integer(reader, "console.session_hours", default: 12)
        guard Self.sessionHoursRange.contains(sessionHours) else {
            throw HeraldConfiguration.invalid("console.session_hours", "must be 1 to 720")
        }
        secureCookie = try HeraldConfiguration.boolean(reader, "console.secure_cookie", default: true)
        signInAttempts = try HeraldConfiguration.integer(reader, "console.sign_in_attempts", default: 10)
        guard (1...1000).contains(signInAttempts) else {
            throw HeraldConfiguration.invalid("console.sign_in_attempts", "must be 1 to 1000")
        }
        signInWindowSeconds = try HeraldConfiguration.integer(reader, "console.sign_in_window_seconds", default: 300)
        guard (1...86_400).contains(signInWindowSeconds) else {
            throw HeraldConfiguration.invalid("console.sign_in_window_seconds", "must be 1 to 86400")
        }
    }
}
