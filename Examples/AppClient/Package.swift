// swift-tools-version:6.2
// An app's view of FreshAir: a package that depends on the `FreshAir` product alone, as an
// iOS app target would. `scripts/check-consumer` builds it, checks that nothing from SwiftNIO
// or AsyncHTTPClient was built for it, and syncs `Published/Hello.freshair` from nginx with it.
import PackageDescription

let package = Package(
    name: "AppClient",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .visionOS(.v2)],
    dependencies: [.package(name: "FreshAir", path: "../..")],
    targets: [
        .executableTarget(
            name: "AppClient",
            dependencies: [.product(name: "FreshAir", package: "FreshAir")]
        ),
        // A SwiftUI app's use of `ContentModel`; its views are built on Apple platforms only.
        .target(
            name: "SwiftUIExample",
            dependencies: [.product(name: "FreshAir", package: "FreshAir")]
        ),
        // Every Swift snippet of the DocC articles, so that one drifting from the API fails the
        // build (scripts/check-readme compares each with its article).
        .target(
            name: "DocSnippets",
            dependencies: [
                .product(name: "FreshAir", package: "FreshAir"),
                .product(name: "FreshAirTesting", package: "FreshAir"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
