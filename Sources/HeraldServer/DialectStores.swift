import HeraldCore
import HeraldHomeAssistant
import HeraldLeanCloud
import HeraldPostgres
import HeraldSNSAPI
import HeraldSQLite
import HeraldUnifiedPush

// Where the stores Herald ships meet the dialects (docs/architecture.md, "Adding a dialect"): a
// dialect with records of its own declares their store protocol in its module, each store
// implements the protocol's methods in its own module (`SQLiteStore+SNSAPI.swift`,
// `PostgresStore+SNSAPI.swift`, …) without importing the dialect, and the conformances are declared
// here, in the one module that sees both. A store that lacks one is refused when the application is
// built (`DialectStoreMissing`).

extension SQLiteStore: SNSAPIStore, RelayUsageStore, LeanCloudUserStore, PushEndpointStore {}

extension PostgresStore: SNSAPIStore, RelayUsageStore, LeanCloudUserStore, PushEndpointStore {}
