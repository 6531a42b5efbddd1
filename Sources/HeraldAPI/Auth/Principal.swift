/// Who is calling, once their credentials verified.
public enum Principal: Sendable, Equatable {
    /// The app's server key: full access to the app.
    case server(appID: String)
    /// The app's client key: may register, update and delete installations.
    case client(appID: String)
    /// One of the app's users, by a JWT from the app's own auth system; sees only their own records.
    case user(appID: String, userID: String)

    /// The app the caller acts on.
    public var appID: String {
        switch self {
        case .server(let appID), .client(let appID), .user(let appID, _): appID
        }
    }

    /// The user id when the caller is a user.
    public var userID: String? {
        if case .user(_, let userID) = self { return userID }
        return nil
    }
}
