// swift-tools-version: 5.9
// The SwiftUI example as an app: open this folder in Xcode (or Swift Playgrounds) on a Mac and
// run it in the simulator. Apple product types exist only in Xcode's toolchain, so nothing
// here builds on Linux; the views' sources are links to Examples/AppClient/Sources/SwiftUIExample,
// whose non-UI code (ExampleServer, ContentStatus) CI builds there. Never compiled by CI.
import AppleProductTypes
import PackageDescription

let package = Package(
    name: "FreshAir Content",
    platforms: [.iOS("18.0")],
    products: [
        .iOSApplication(
            name: "FreshAir Content",
            targets: ["ContentApp"],
            bundleIdentifier: "com.example.freshair.content",
            teamIdentifier: "",
            displayVersion: "1.0",
            bundleVersion: "1",
            appIcon: .placeholder(icon: .cloud),
            accentColor: .presetColor(.blue),
            supportedDeviceFamilies: [.pad, .phone],
            supportedInterfaceOrientations: [
                .portrait, .landscapeRight, .landscapeLeft, .portraitUpsideDown(.when(deviceFamilies: [.pad])),
            ],
            capabilities: [
                // `breeze serve` on the Mac is plain HTTP on 127.0.0.1: App Transport Security
                // allows it with local networking only (a shipping app reads HTTPS and needs neither).
                .appTransportSecurity(configuration: .init(allowsLocalNetworking: true)),
                .localNetwork(purposeString: "Loads content from the development server on this network."),
            ]
        )
    ],
    dependencies: [.package(name: "FreshAir", path: "../..")],
    targets: [
        .executableTarget(
            name: "ContentApp",
            dependencies: [.product(name: "FreshAir", package: "FreshAir")],
            path: "Sources/ContentApp"
        )
    ]
)
