// swift-tools-version: 6.2

import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// What every dialect module builds on: the shared HTTP machinery (`HeraldAPI`), the engine and
/// Hummingbird. A dialect never depends on another dialect.
let dialectDependencies: [Target.Dependency] = [
    "HeraldCore", "HeraldAPI", "HeraldEngine",
    .product(name: "Hummingbird", package: "hummingbird"),
    .product(name: "Configuration", package: "swift-configuration"),
    .product(name: "Crypto", package: "swift-crypto"),
    .product(name: "HTTPTypes", package: "swift-http-types"),
    .product(name: "Logging", package: "swift-log"),
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "OpenAPIKit", package: "OpenAPIKit"),
]

/// What the tests that drive the real router and engine build on (HeraldServerTests and each
/// dialect's tests).
let routerTestDependencies: [Target.Dependency] = [
    "HeraldCore", "HeraldAPI", "HeraldEngine", "HeraldServer", "HeraldSQLite", "HeraldPostgres",
    "HeraldServerTestSupport", "HeraldTestSupport", "HeraldProviderMocks", "HeraldAPNs", "HeraldFCM", "HeraldSNS",
    "HeraldWebhooks",
    .product(name: "AsyncHTTPClient", package: "async-http-client"),
    .product(name: "Configuration", package: "swift-configuration"),
    .product(name: "Crypto", package: "swift-crypto"),
    .product(name: "GRDB", package: "GRDB.swift"),
    .product(name: "HTTPTypes", package: "swift-http-types"),
    .product(name: "Hummingbird", package: "hummingbird"),
    .product(name: "HummingbirdTesting", package: "hummingbird"),
    .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
    .product(name: "JWTKit", package: "jwt-kit"),
    .product(name: "Logging", package: "swift-log"),
    .product(name: "NIOCore", package: "swift-nio"),
    .product(name: "NIOHTTP1", package: "swift-nio"),
]

/// The other systems' APIs Herald serves unchanged, one module each (docs/architecture.md).
let dialects = [
    "HeraldAOVIS", "HeraldArgusAI", "HeraldHomeAssistant", "HeraldLeanCloud", "HeraldSNSAPI", "HeraldUnifiedPush",
    "HeraldMatrix", "HeraldNtfy", "HeraldGotify",
]

let package = Package(
    name: "herald",
    platforms: [.macOS(.v15), .iOS(.v16)],
    products: [
        .executable(name: "herald", targets: ["herald"]),
        .executable(name: "herald-bench", targets: ["HeraldBench"]),
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
        .library(name: "HeraldSQLite", targets: ["HeraldSQLite"]),
        .library(name: "HeraldPostgres", targets: ["HeraldPostgres"]),
        .library(name: "HeraldEngine", targets: ["HeraldEngine"]),
        .library(name: "HeraldServer", targets: ["HeraldServer"]),
        .library(name: "HeraldWebPush", targets: ["HeraldWebPush"]),
        .library(name: "HeraldSNS", targets: ["HeraldSNS"]),
        .library(name: "HeraldClient", targets: ["HeraldClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: ["JSON", "YAML"]),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // OpenAPIKit builds /openapi.yaml from the routes' own declarations; its ExternalLoading trait
        // (loading remote references) is not needed.
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0", traits: []),
    ],
    targets: [
        .target(
            name: "HeraldCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Mustache", package: "swift-mustache"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldHTTP2",
            dependencies: [
                "HeraldCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldAPNs",
            dependencies: [
                "HeraldCore", "HeraldHTTP2",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldFCM",
            dependencies: [
                "HeraldCore", "HeraldHTTP2",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldWebPush",
            dependencies: [
                "HeraldCore", "HeraldHTTP2",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        // AWS Signature Version 4: signing (the SNS client) and verifying (the SNS API dialect).
        .target(
            name: "HeraldSigV4",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldSNS",
            dependencies: [
                // SNS renders each endpoint's message as APNs or FCM would.
                "HeraldCore", "HeraldSigV4", "HeraldAPNs", "HeraldFCM",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Webhooks out: the outbox's deliverer, Standard Webhooks signing on the wire, the network policy.
        .target(
            name: "HeraldWebhooks",
            dependencies: [
                "HeraldCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldSQLite",
            dependencies: [
                "HeraldCore",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldPostgres",
            dependencies: [
                "HeraldCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The pool's own errors (a lease refused while the database cannot be reached).
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HeraldEngine",
            dependencies: [
                "HeraldCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The HTTP machinery the native API and every dialect share: route table, OpenAPI
        // declarations, principals and key lookup, error bodies, settings.
        .target(
            name: "HeraldAPI",
            dependencies: [
                "HeraldCore", "HeraldEngine",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "HeraldAOVIS", dependencies: dialectDependencies, swiftSettings: swiftSettings),
        .target(name: "HeraldArgusAI", dependencies: dialectDependencies, swiftSettings: swiftSettings),
        .target(name: "HeraldHomeAssistant", dependencies: dialectDependencies, swiftSettings: swiftSettings),
        .target(name: "HeraldLeanCloud", dependencies: dialectDependencies, swiftSettings: swiftSettings),
        .target(
            name: "HeraldSNSAPI", dependencies: dialectDependencies + ["HeraldSigV4"], swiftSettings: swiftSettings),
        .target(name: "HeraldUnifiedPush", dependencies: dialectDependencies, swiftSettings: swiftSettings),
        .target(name: "HeraldMatrix", dependencies: dialectDependencies, swiftSettings: swiftSettings),
        .target(name: "HeraldNtfy", dependencies: dialectDependencies, swiftSettings: swiftSettings),
        .target(name: "HeraldGotify", dependencies: dialectDependencies, swiftSettings: swiftSettings),
        .target(
            name: "HeraldServer",
            dependencies: [
                "HeraldCore",
                "HeraldAPI",
                // The stores Herald ships, to declare that they keep the dialects' records (DialectStores.swift).
                "HeraldSQLite",
                "HeraldPostgres",
                "HeraldEngine",
                "HeraldWebPush",
                "HeraldAPNs",
                "HeraldFCM",
                "HeraldSNS",
                "HeraldWebhooks",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ] + dialects.map { .target(name: $0) },
            // The web console's files, compiled into the binary (PackageResources.console_html, …).
            resources: [
                .embedInCode("Console/Assets/console.html"),
                .embedInCode("Console/Assets/console.css"),
                .embedInCode("Console/Assets/console.js"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldCore",
                "HeraldAPI",
                "HeraldServer",
                "HeraldWebhooks",
                "HeraldSQLite",
                "HeraldPostgres",
                "HeraldEngine",
                "HeraldSNS",
                "HeraldWebPush",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "HeraldBench",
            dependencies: [
                "HeraldAPNs", "HeraldCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // What every test target may build on: fixtures, an in-memory CA, child processes (Python
        // peers, throwaway PostgreSQL databases), and the engine's fakes (a manual clock, recording
        // transports).
        .target(
            name: "HeraldTestSupport",
            dependencies: [
                "HeraldCore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Mock APNs, FCM and Web Push services speaking their real protocols over TLS, moto (SNS), and
        // the HTTP/1 and HTTP/2 test servers and fault-injecting proxy they are built on.
        .target(
            name: "HeraldProviderMocks",
            dependencies: [
                "HeraldCore", "HeraldTestSupport", "HeraldSNS", "HeraldSigV4",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: swiftSettings
        ),
        // The cases every store runs (the contract of HeraldCore's store protocols, and of the store
        // protocols the dialects with records of their own declare).
        .target(
            name: "HeraldStoreConformance",
            dependencies: [
                "HeraldCore", "HeraldTestSupport", "HeraldSNSAPI", "HeraldHomeAssistant", "HeraldLeanCloud",
                "HeraldUnifiedPush",
            ],
            swiftSettings: swiftSettings
        ),
        // The real router and engine over a temporary SQLite store, for the server's and the dialects' tests.
        .target(
            name: "HeraldServerTestSupport",
            dependencies: [
                "HeraldCore", "HeraldAPI", "HeraldEngine", "HeraldSQLite", "HeraldServer", "HeraldTestSupport",
                "HeraldProviderMocks", "HeraldAPNs", "HeraldFCM", "HeraldSNS", "HeraldWebhooks", "HeraldSigV4",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ] + dialects.map { .target(name: $0) },
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldCoreTests",
            dependencies: ["HeraldCore", "HeraldTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldEngineTests",
            dependencies: [
                "HeraldEngine", "HeraldCore", "HeraldTestSupport", "HeraldAPNs", "HeraldFCM", "HeraldWebPush",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldHTTP2Tests",
            dependencies: [
                "HeraldHTTP2", "HeraldCore", "HeraldTestSupport", "HeraldProviderMocks",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldAPNsTests",
            dependencies: [
                "HeraldAPNs", "HeraldCore", "HeraldHTTP2", "HeraldTestSupport", "HeraldProviderMocks",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldFCMTests",
            dependencies: [
                "HeraldFCM", "HeraldCore", "HeraldTestSupport", "HeraldProviderMocks",
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldWebPushTests",
            dependencies: [
                "HeraldWebPush", "HeraldCore", "HeraldHTTP2", "HeraldTestSupport", "HeraldProviderMocks",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldSNSTests",
            dependencies: [
                "HeraldSNS", "HeraldSigV4", "HeraldCore", "HeraldTestSupport", "HeraldProviderMocks",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Package.swift's target graph against docs/architecture.md's module table.
        .testTarget(name: "PackageGraphTests", dependencies: ["HeraldTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HeraldSigV4Tests",
            dependencies: [
                "HeraldSigV4",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldTestSupportTests",
            dependencies: [
                "HeraldTestSupport", "HeraldProviderMocks", "HeraldCore", "HeraldStoreConformance",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldSQLiteTests",
            dependencies: [
                // HeraldServer: where the store conforms to the dialects' store protocols.
                "HeraldCore", "HeraldSQLite", "HeraldTestSupport", "HeraldStoreConformance", "HeraldServer",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldPostgresTests",
            dependencies: [
                // HeraldServer: where the store conforms to the dialects' store protocols.
                "HeraldCore", "HeraldPostgres", "HeraldTestSupport", "HeraldStoreConformance", "HeraldServer",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HeraldServerTests",
            dependencies: routerTestDependencies + [
                "HeraldWebPush",
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
            ] + dialects.map { .target(name: $0) },
            swiftSettings: swiftSettings
        ),
        // One test target per dialect, through the real router (HeraldServerTestSupport).
    ]
        + dialects.map { dialect in
            .testTarget(
                name: dialect + "Tests",
                dependencies: [.target(name: dialect)] + routerTestDependencies,
                swiftSettings: swiftSettings
            )
        } + [
            .testTarget(
                name: "heraldTests",
                dependencies: [
                    "herald", "HeraldTestSupport", "HeraldProviderMocks", "HeraldSQLite",
                    .product(name: "GRDB", package: "GRDB.swift"),
                ],
                swiftSettings: swiftSettings
            ),
            // The device-side library: Foundation only, so iOS and macOS apps take nothing else.
            .target(name: "HeraldClient", swiftSettings: swiftSettings),
            .testTarget(
                name: "HeraldClientTests",
                dependencies: ["HeraldClient", "HeraldCore", "HeraldTestSupport", "HeraldProviderMocks", "herald"],
                swiftSettings: swiftSettings
            ),
        ]
)
