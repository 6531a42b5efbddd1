import HeraldClient

/// The client's `Preferences`, named apart from `HeraldCore.Preferences` (the module and its actor
/// are both `HeraldClient`, so the type cannot be qualified by its module where both are imported).
typealias ClientPreferences = Preferences
