import Configuration
import HeraldAPI
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

    /// Reads the ``Settings`` (`console.*`).
    /// - Throws: `HeraldError` `invalid_configuration` naming the key at fault.
    public init(reader: ConfigReader) throws {
        sessionHours = try reader.value(Settings.sessionHours)
        secureCookie = try reader.value(Settings.secureCookie)
        signInAttempts = try reader.value(Settings.signInAttempts)
        signInWindowSeconds = try reader.value(Settings.signInWindowSeconds)
    }

    /// The web console's settings.
    public enum Settings {
        public static let sessionHours = Setting<Int>(
            "console.session_hours", ConsoleConfiguration.sessionHoursRange, unit: "hours", default: 12,
            "How long a console sign-in lasts.")
        public static let secureCookie = Setting<Bool>(
            "console.secure_cookie", default: true,
            """
            Whether the session cookie carries `Secure` (sent over HTTPS only). Browsers treat `http://127.0.0.1` \
            and `http://localhost` as secure, so the default works locally; turn it off only to reach the console \
            over plain HTTP on another address.
            """)
        public static let signInAttempts = Setting<Int>(
            "console.sign_in_attempts", 1...1000, default: 10,
            """
            Failed sign-ins a client address may make at once before it waits (`429`); it regains one every \
            `sign_in_window_seconds / sign_in_attempts`.
            """)
        public static let signInWindowSeconds = Setting<Int>(
            "console.sign_in_window_seconds", 1...86_400, unit: "seconds", default: 300,
            "The time in which the failed sign-ins allowance refills.")
        /// Every setting above, in the reference's order.
        public static let all: [any DeclaredSetting] = [
            sessionHours, secureCookie, signInAttempts, signInWindowSeconds,
        ]
    }
}
