import Foundation
import HeraldCore

/// Where webhook requests may go (docs/webhooks.md, "Safety"): `https` URLs only unless
/// `webhooks.allow_http`, and never an address in a private, loopback, link-local, unique-local,
/// shared, multicast, reserved or unspecified range unless a network of `webhooks.allow_networks`
/// holds it. A name is resolved once and every address it resolves to is checked; the request
/// connects to the address checked (``WebhookSender``), so a second lookup cannot lead elsewhere.
public struct WebhookNetworkPolicy: Sendable, Equatable {
    /// Whether `http` URLs are allowed.
    public var allowHTTP: Bool
    /// Networks allowed even though they are in a refused range.
    public var allowNetworks: [IPNetwork]

    /// Creates a policy.
    public init(allowHTTP: Bool = false, allowNetworks: [IPNetwork] = []) {
        self.allowHTTP = allowHTTP
        self.allowNetworks = allowNetworks
    }

    /// The ranges refused by default.
    public static let refused: [IPNetwork] = [
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
        "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
        // IPv6: unspecified, loopback, IPv4-compatible (deprecated, `::a.b.c.d`), unique-local, link-local, multicast.
        "::/128", "::1/128", "::/96", "fc00::/7", "fe80::/10", "ff00::/8",
    ].map { try! IPNetwork($0) }

    /// Checks a URL's form: its scheme, a host, no user information.
    /// - Throws: `invalid_webhook_url` with the reason.
    public func check(url text: String) throws(HeraldError) -> URLComponents {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(), let host = url.host,
            !host.isEmpty
        else { throw Self.invalid("The webhook URL must be an absolute URL with a host.") }
        guard scheme == "https" || (scheme == "http" && allowHTTP) else {
            throw Self.invalid(
                allowHTTP
                    ? "The webhook URL must be http or https."
                    : "The webhook URL must be https (webhooks.allow_http is off).")
        }
        guard url.user == nil, url.password == nil else {
            throw Self.invalid("The webhook URL must not carry credentials.")
        }
        if let address = IPAddress(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) {
            try check(address: address)
        } else if ["localhost", "localhost."].contains(host.lowercased()) || host.lowercased().hasSuffix(".localhost")
            || host.lowercased().hasSuffix(".localhost.")
        {
            try check(address: IPAddress("127.0.0.1")!)
        }
        return url
    }

    /// Checks one address a name resolved to (or a literal).
    /// - Throws: `webhook_address_refused`.
    public func check(address: IPAddress) throws(HeraldError) {
        guard !allowNetworks.contains(where: { $0.contains(address) }) else { return }
        // An IPv4-mapped address (`::ffff:127.0.0.1`) is the IPv4 address it maps.
        let effective = address.unmapped
        if let range = Self.refused.first(where: { $0.contains(effective) }) {
            throw HeraldError.invalidValue(
                "url", code: "webhook_address_refused",
                "The webhook URL leads to \(address), in \(range), which is refused unless webhooks.allow_networks lists it."
            )
        }
    }

    static func invalid(_ message: String) -> HeraldError {
        .invalidValue("url", code: "invalid_webhook_url", message)
    }
}
