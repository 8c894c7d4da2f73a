// swift-tools-version:6.2
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // A module's dependencies show where they are used: `public import` marks the few whose
    // types a public signature names (Foundation's, and the SwiftNIO adapters' own), so that
    // no third-party type slips into FreshAir's public API unnoticed.
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "FreshAir",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .visionOS(.v2)],
    products: [
        // What an app links: Foundation, swift-crypto (CryptoKit on Apple platforms) and zlib, no SwiftNIO.
        .library(name: "FreshAir", targets: ["FreshAir"]),
        // SwiftNIO transports for servers and tools on Linux: AsyncHTTPClient's, and a pipelining
        // HTTP/1.1 client (breeze uses it).
        .library(name: "FreshAirAsyncHTTPClient", targets: ["FreshAirAsyncHTTPClient"]),
        // For an app's tests: a static host in memory, answering as nginx or S3 would.
        .library(name: "FreshAirTesting", targets: ["FreshAirTesting"]),
        .executable(name: "breeze", targets: ["breeze"]),
    ],
    traits: [
        // On Linux, FreshAir's default transport is FoundationNetworking's URLSession, which
        // loads libcurl and some thirty shared libraries. A Linux server or tool that passes
        // its own transport (AsyncHTTPClient's) turns this off: `traits: []`. breeze's release
        // build does. Apple platforms always have URLSession; the trait changes nothing there.
        .trait(
            name: "LinuxURLSession",
            description:
                "On Linux, include URLSessionTransport (FoundationNetworking, libcurl) as the default transport."
        ),
        .default(enabledTraits: ["LinuxURLSession"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Already in AsyncHTTPClient's graph; named so its TLS errors are classified by type.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // `swift package generate-documentation --target FreshAir`: a plugin, linked into nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSystemCalls"),
        .target(
            name: "FreshAir",
            dependencies: [
                "CZlib",
                "CSystemCalls",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // Apple's privacy manifest: the file timestamps and sizes (stat, lstat, fstat,
            // fstatat) the store reads are of files in the app's own or App Group container
            // (C617.1); no tracking, nothing collected. See docs/APPLE.md.
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: strict
        ),
        .target(
            name: "FreshAirAsyncHTTPClient",
            dependencies: [
                "FreshAir",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strict
        ),
        .target(name: "FreshAirTesting", dependencies: ["FreshAir"], swiftSettings: strict),
        .target(
            name: "BreezeKit",
            dependencies: [
                "FreshAir",
                "FreshAirAsyncHTTPClient",
                "CZlib",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "breeze",
            dependencies: [
                "CSystemCalls",
                "FreshAir",
                "FreshAirAsyncHTTPClient",
                "BreezeKit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strict
        ),
        // Benchmarks/fleet's devices: many apps in one process, each with its own store.
        .executableTarget(
            name: "FleetDevices",
            dependencies: [
                "FreshAir",
                "FreshAirAsyncHTTPClient",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/FleetDevices",
            swiftSettings: strict
        ),
        // What both test targets share: seeded bytes, and a thread of its own for a test (`.backgroundThread`).
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(
            name: "FreshAirTests",
            dependencies: ["FreshAir", "FreshAirTesting", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "FreshAir", "FreshAirAsyncHTTPClient", "BreezeKit", "TestSupport",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
