// swift-tools-version:6.2
// libFuzzer targets for every parser that reads remote bytes, kept out of the main package's
// build. Built and run by scripts/fuzz: `swift build --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address`.
import PackageDescription

let package = Package(
    name: "FreshAirFuzz",
    dependencies: [.package(name: "FreshAir", path: "..")],
    targets: [
        .executableTarget(
            name: "FreshAirFuzz",
            dependencies: [.product(name: "FreshAir", package: "FreshAir")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    ],
    swiftLanguageModes: [.v6]
)
