import HeraldCore

extension Dispatcher {
    /// Why a delivery to `installation` would fail for want of configuration (the app has no
    /// transport for its service, or the transport lacks credentials or a topic for it), or nil
    /// when it can be sent. Lets a caller that answers synchronously (a push relay) refuse a send
    /// that could only fail.
    public func configurationProblem(for installation: Installation) -> String? {
        guard let transport = transports(of: installation.appID).transports[installation.service] else {
            return "The app has no \(installation.service.rawValue) transport configured"
        }
        return transport.configurationProblem(for: installation)
    }
}

extension Dispatcher {
    /// Whether `appID` has a transport for `service` now (credentials configured).
    public func hasTransport(appID: String, service: PushService) -> Bool {
        transports(of: appID).transports[service] != nil
    }
}
