/// A store whose generated app keys can be replaced (`herald keys rotate`).
public protocol AppKeyRotation: Sendable {
    /// Stores `keys` for their app in place of any it had: the old keys stop working once the
    /// servers reload them.
    /// - Throws: The store's error when it cannot write.
    func replaceAppKeys(_ keys: AppKeys) async throws
}

extension AppKeys {
    /// The JSON the stores seal for these keys: `{"server_key", "client_key", "publish_key"}`.
    public var sealedPlaintext: [UInt8] {
        var keys: [String: JSONValue] = ["server_key": .string(serverKey), "client_key": .string(clientKey)]
        keys["publish_key"] = publishKey.map(JSONValue.string)
        return JSONValue.object(keys).serialized()
    }
}
