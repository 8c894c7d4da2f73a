/// The `device` and `platform` a condition sees, decided from facts the system reports.
///
/// Pure functions, so every case is tested on Linux; ``ConditionEnvironment/current(appVersion:)``
/// gathers the facts (UIKit's idiom on the main thread, the hardware model otherwise).
/// The names are the idioms of an asset catalog's `Contents.json`: `iphone`, `ipad`, `mac`,
/// `tv`, `vision`, `watch`, and `desktop` off Apple platforms.
enum DeviceClass {
    /// The device class for UIKit's `userInterfaceIdiom`, spelt as its case name (`phone`,
    /// `pad`, `mac`, `tv`, `vision`, `carPlay`…). An iPad app on a Mac ("Designed for iPad")
    /// reports `pad`, and gets the iPad's variants, as UIKit's own asset lookup does.
    static func name(idiom: String) -> String? {
        switch idiom {
        case "phone", "carPlay": "iphone"
        case "pad": "ipad"
        case "mac": "mac"
        case "tv": "tv"
        case "vision": "vision"
        case "watch": "watch"
        default: nil
        }
    }

    /// The device class for a hardware model identifier (`iPad13,4`, `iPhone16,2`,
    /// `AppleTV14,1`, `RealityDevice14,1`, `Mac15,3`, `MacBookPro18,1`), which any thread can
    /// read; on a simulator, the model it simulates.
    static func name(hardwareModel model: String) -> String? {
        let prefixes = [
            ("iPhone", "iphone"), ("iPod", "iphone"), ("iPad", "ipad"), ("AppleTV", "tv"),
            ("RealityDevice", "vision"), ("Watch", "watch"), ("Mac", "mac"), ("iMac", "mac"),
        ]
        return prefixes.first { model.hasPrefix($0.0) }?.1
    }

    /// The platform conditions see. An iOS app running on a Mac (Mac Catalyst, or an iPad app
    /// on Apple silicon) reports the Mac's `systemVersion`, so it is `macOS` to conditions too:
    /// `platform == 'iOS' && systemVersion >= '18'` must not match macOS 15.
    static func platform(compiledFor compiled: String, runningOnMac: Bool) -> String {
        compiled == "iOS" && runningOnMac ? "macOS" : compiled
    }

    /// Whether the platform gives files a Data Protection class (closed while the device is
    /// locked, by class): iOS and the platforms built on it.
    static func hasDataProtection(platform: String) -> Bool {
        ["iOS", "visionOS", "watchOS"].contains(platform)
    }

    /// ``hasDataProtection(platform:)`` for the platform this code was built for.
    static var hasDataProtectionHere: Bool {
        hasDataProtection(
            platform: platform(
                compiledFor: ConditionEnvironment.compiledPlatform,
                runningOnMac: DeviceTraits.runningOnMac
            )
        )
    }

    /// What an unknown idiom or model falls back to: the platform's usual device.
    static func fallback(platform: String) -> String {
        switch platform {
        case "iOS": "iphone"
        case "tvOS": "tv"
        case "watchOS": "watch"
        case "visionOS": "vision"
        case "macOS": "mac"
        default: "desktop"
        }
    }
}
