// swift-tools-version:6.2
import PackageDescription

/// Settings every target shares: Swift 6 language mode (strict concurrency) plus the upcoming
/// features the project adopts.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// swift-collections' double-ended queue, for the queues taken from the front (mailboxes, timers).
let deque = Target.Dependency.product(name: "DequeModule", package: "swift-collections")

// Built and tested on Linux only (Debian, Raspberry Pi OS), so no Apple platform is declared: the MQTT
// engine asks sockets for SO_DOMAIN and sets TCP_CORK, and the hub build links with lld's layout flags.
let package = Package(
    name: "homegate",
    products: [
        .executable(name: "homegate", targets: ["homegate"]),
        .library(name: "MQTT", targets: ["MQTT"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/attaswift/BigInt", from: "6.0.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // Shared libraries loaded on first use (dlopen), for Avahi below.
        .target(name: "CDynamicLoading", linkerSettings: [.linkedLibrary("dl")]),
        // libmosquitto (Debian's libmosquitto-dev): the one MQTT engine, for plain TCP and TLS.
        .systemLibrary(
            name: "CQRencode", path: "Sources/CQRencode", pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(
            name: "CMosquitto", path: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // glibc's malloc.h: `malloc_trim` when the gateway's loop comes to rest.
        .systemLibrary(name: "CMalloc", path: "Sources/CMalloc"),
        // OpenSSL's libcrypto (Debian's libssl-dev): big-number arithmetic for HomeKit's SRP.
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // Avahi's headers, and its functions loaded on first use (HomeKit discovery only).
        .target(name: "CAvahi", dependencies: ["CDynamicLoading"]),
        // Avahi for the HAP driver's browser and the bridges' advertisers: loaded on first use.
        .target(
            name: "Avahi",
            dependencies: ["CAvahi", "Execution", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings),
        .target(
            name: "MQTT",
            dependencies: [
                "AsyncMailbox",
                "Execution",
                "CMosquitto",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "JSON", swiftSettings: swiftSettings),
        .target(name: "AsyncMailbox", dependencies: [deque], swiftSettings: swiftSettings),
        // Where code runs: the serial executors the actors choose between, and the one timer.
        .target(name: "Execution", dependencies: [deque], swiftSettings: swiftSettings),
        .target(
            name: "HAPProtocol",
            dependencies: [
                "COpenSSL",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "BigInt", package: "BigInt"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Zigbee2MQTT",
            dependencies: [
                "AsyncMailbox",
                "Execution",
                "HomeModel",
                "JSON",
                "MQTT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Zigbee2MQTTStandIn",
            dependencies: [
                "AsyncMailbox",
                "JSON",
                "MQTT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The recorded payloads it replays, read from the source tree (their README says whence).
            exclude: ["Recordings"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Broker",
            swiftSettings: swiftSettings
        ),
        // Pure schedule computation for automations: the home's wall clock under the clock rules,
        // times of day, timers, NOAA sunrise and sunset, what came due while the hub was down. A
        // leaf, so the home model can store a schedule and the automation service can run it.
        .target(name: "Schedules", swiftSettings: swiftSettings),
        .target(
            name: "HomeModel",
            dependencies: [
                "AsyncMailbox",
                "Execution",
                "JSON",
                "Schedules",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VirtualDevices",
            dependencies: ["Execution", "HomeModel", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Automations",
            dependencies: [
                "AsyncMailbox",
                "Execution",
                "HomeModel",
                "Schedules",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // What each sensor did (issue 51): a second SQLite file of recorded values, hourly
        // aggregates and a timeline of events, filled from the model's changes.
        .target(
            name: "History",
            dependencies: [
                deque,
                "AsyncMailbox",
                "Execution",
                "HomeModel",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Gateway",
            dependencies: [
                deque,
                "AsyncMailbox",
                "Execution",
                "History",
                "JSON",
                "MQTT",
                "HomeModel",
                "Schedules",
                "VirtualDevices",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Config",
            dependencies: [
                "VirtualDevices",
                "Gateway",
                "HomeModel",
                "MQTT",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        // HAP's types, values and status codes as the home model's: shared by the controller (HAP)
        // and the accessory server (HomeKitBridge).
        .target(name: "HAPModel", dependencies: ["HAPProtocol", "HomeModel", "JSON"], swiftSettings: swiftSettings),
        .target(
            name: "HAP",
            dependencies: [
                "Avahi",
                "CAvahi",
                "Execution",
                "HAPModel",
                "HAPProtocol",
                "HomeModel",
                "JSON",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The hub's homes as HomeKit bridges for Apple's Home app (issue 48): numbering, pairing
        // and serving on HAPProtocol, one more face on the home model.
        .target(
            name: "HomeKitBridge",
            dependencies: [
                "AsyncMailbox", "Avahi", "CAvahi", "CQRencode", "Execution", "HAPModel", "HAPProtocol", "HomeModel",
                "JSON", "MQTT",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Web",
            dependencies: [
                "AsyncMailbox",
                "Execution",
                "Config",
                "Gateway",
                "History",
                "HomeModel",
                "JSON",
                "MQTT",
                "Schedules",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The page's stylesheet, script, icons and templates, compiled into the binary: a hub runs
            // the one file it was given, with no resource folder beside it.
            resources: [
                .embedInCode("Resources/app.css"), .embedInCode("Resources/app.js"),
                .embedInCode("Resources/favicon.svg"), .embedInCode("Resources/icons.svg"),
                .embedInCode("Resources/templates/administration.mustache"),
                .embedInCode("Resources/templates/automationDays.mustache"),
                .embedInCode("Resources/templates/automationEnd.mustache"),
                .embedInCode("Resources/templates/automations.mustache"),
                .embedInCode("Resources/templates/automationStart.mustache"),
                .embedInCode("Resources/templates/card.mustache"),
                .embedInCode("Resources/templates/characteristic.mustache"),
                .embedInCode("Resources/templates/command.mustache"), .embedInCode("Resources/templates/csrf.mustache"),
                .embedInCode("Resources/templates/frame.mustache"), .embedInCode("Resources/templates/health.mustache"),
                .embedInCode("Resources/templates/history.mustache"),
                .embedInCode("Resources/templates/home.mustache"), .embedInCode("Resources/templates/homes.mustache"),
                .embedInCode("Resources/templates/login.mustache"),
                .embedInCode("Resources/templates/problem.mustache"),
                .embedInCode("Resources/templates/request.mustache"),
                .embedInCode("Resources/templates/timeline.mustache"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "homegate",
            dependencies: [
                "AsyncMailbox",
                "CMalloc",
                "Automations",
                "Config",
                "History",
                "Web",
                "HAP",
                "HomeKitBridge",
                "VirtualDevices",
                "Broker",
                "HomeModel",
                "Gateway",
                "MQTT",
                "Zigbee2MQTT",
                "Zigbee2MQTTStandIn",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings,
            linkerSettings: [
                // lld, with relative relocations packed (DT_RELR, glibc 2.36): the table the loader
                // reads at every start shrinks from megabytes (3 MB in the hub build) to kilobytes,
                // and with it the RSS (docs/benchmarks.md). No symbols exported: the toolchain's
                // static-stdlib link exports every package's (36,000 names, whose tables the
                // loader searches for each library symbol it binds: 2.3 MB resident in the hub
                // build); nothing loads into the process that needs them.
                .unsafeFlags(
                    [
                        "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker",
                        "--no-export-dynamic",
                    ],
                    .when(platforms: [.linux]))
            ]
        ),
        // What the test targets share: `eventually` (waiting for a state), scoped cleanups, a private
        // mosquitto (`withBroker`, on Broker's MosquittoBroker) and the test certificates. A plain
        // target the test targets depend on, in no product.
        .target(
            name: "TestSupport",
            dependencies: [
                "Broker", "HomeModel", "MQTT", .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayTests",
            dependencies: [
                "AsyncMailbox", "Config", "Gateway", "History", "HomeModel", "Schedules", "VirtualDevices", "JSON",
                "MQTT", "TestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "WebTests",
            dependencies: [
                "Web", "Config", "Gateway", "History", "HomeModel", "Schedules", "VirtualDevices", "JSON", "MQTT",
                "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HAPProtocolTests",
            dependencies: [
                "HAPProtocol",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "BigInt", package: "BigInt"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HomeKitBridgeTests",
            dependencies: ["HAPModel", "HomeKitBridge", "HomeModel", "JSON"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HAPTests",
            dependencies: [
                "Broker", "HAP", "HAPModel", "HAPProtocol", "HomeModel", "JSON", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            // HAP-python's /accessories answer (scripts/dump-hap-accessories.py), read from the source tree.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MQTTTests",
            dependencies: [
                "AsyncMailbox", "MQTT", "TestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "AsyncMailbox",
                "Automations",
                "VirtualDevices",
                "Broker",
                "Config",
                "Gateway",
                "History",
                "HomeKitBridge",
                "HomeModel",
                "JSON",
                "MQTT",
                "Web",
                "HAP",
                "HAPProtocol",
                "TestSupport",
                "Zigbee2MQTT",
                "Zigbee2MQTTStandIn",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "Zigbee2MQTTTests",
            dependencies: ["Zigbee2MQTT", "HomeModel", "JSON"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AutomationsTests",
            dependencies: [
                "Automations", "AsyncMailbox", "Execution", "HomeModel", "Schedules", "VirtualDevices", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SchedulesTests",
            dependencies: ["Schedules"],
            // The sun's reference figures (scripts/sun-reference.py), read from the source tree.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HomeModelTests",
            dependencies: [
                "HomeModel", "VirtualDevices", "JSON", "TestSupport", "AsyncMailbox", "Execution", "crash-writer",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "HistoryTests",
            dependencies: [
                "AsyncMailbox", "Execution", "History", "HomeModel", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VirtualDevicesTests",
            dependencies: ["VirtualDevices", "HomeModel", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .target(name: "CFuzzer", path: "Tests/Fuzz/CFuzzer"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzer"],
            path: "Tests/Fuzz/Support",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "fuzz-topics",
            dependencies: ["FuzzSupport", "Gateway", "HomeModel"],
            path: "Tests/Fuzz/Topics",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "fuzz-payload",
            dependencies: ["FuzzSupport", "Gateway", "HomeModel", "VirtualDevices", "JSON", "MQTT", "Zigbee2MQTT"],
            path: "Tests/Fuzz/Payload",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "fuzz-config",
            dependencies: ["FuzzSupport", "Config", "Gateway", "VirtualDevices"],
            path: "Tests/Fuzz/Config",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "hap-bench",
            dependencies: [
                "Broker", "HAP", "HAPProtocol", "MQTT",
                .product(name: "BigInt", package: "BigInt"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "bench/hap",
            exclude: ["aiohomekit-srp.py"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "flap-bench",
            dependencies: [
                "VirtualDevices", "Broker", "Gateway", "HomeModel", "MQTT",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "bench/flap",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "hap-browse",
            dependencies: ["HAP", .product(name: "Logging", package: "swift-log")],
            path: "Tests/HAPBrowse",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "crash-writer",
            dependencies: ["HomeModel"],
            path: "Tests/CrashWriter",
            swiftSettings: swiftSettings
        ),
    ]
)
