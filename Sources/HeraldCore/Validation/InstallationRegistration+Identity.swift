extension InstallationRegistration {
    /// What registering meets among the app's installations of the registration's service: the one
    /// holding its device id and the one holding its token decide which installation it updates and
    /// which one goes (see ``DispatchRegistry/register(_:appID:now:)``), decided here once for every
    /// store. A device id held decides: the token moves to it, and the token's other holder goes. A
    /// token held alone is updated, unless its holder has another device id: then it goes, and the
    /// registration makes a new installation.
    /// - Parameters:
    ///   - deviceHolder: The installation with the registration's device id, if any.
    ///   - tokenHolder: The installation with the registration's token, if any.
    ///   - installation: The installation a holder is (a store's row, say).
    /// - Returns: The holder to update (nil: a new installation) and the one to delete first (nil: none).
    public func match<Holder>(
        deviceHolder: Holder?, tokenHolder: Holder?, installation: (Holder) -> Installation
    ) -> (updated: Holder?, replaced: Holder?) {
        switch (deviceHolder, tokenHolder) {
        case (let device?, let token?) where installation(device).id != installation(token).id:
            // The token moves to the device that presents it now.
            (device, token)
        case (let device?, _):
            (device, nil)
        case (nil, let token?):
            if let held = installation(token).deviceID, let presented = profile.deviceID, held != presented {
                (nil, token)
            } else {
                (token, nil)
            }
        case (nil, nil):
            (nil, nil)
        }
    }

    /// ``match(deviceHolder:tokenHolder:installation:)`` over installations themselves.
    public func match(
        deviceHolder: Installation?, tokenHolder: Installation?
    ) -> (updated: Installation?, replaced: Installation?) {
        match(deviceHolder: deviceHolder, tokenHolder: tokenHolder) { $0 }
    }
}
