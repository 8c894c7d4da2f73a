import Foundation

#if canImport(UIKit) && !os(watchOS)
import UIKit
#elseif canImport(AppKit)
import AppKit
#endif

/// The device facts only the platform can read: the screen's scale, UIKit's idiom, the
/// hardware model, whether an iOS app runs on a Mac. The Apple seam for device traits: each
/// read has its Apple branch and its Linux twin (nothing known), and what is made of the
/// answers (`DeviceClass`, `ConditionEnvironment.assumedKeys`, `RememberedTraits`) is
/// platform-neutral and tested here.
enum DeviceTraits {
    /// The display scale of the current traits (UIKit) or the main screen (AppKit), when this
    /// runs on the main thread (both belong to the main actor) and one is known; `nil`
    /// otherwise. Not `UIScreen`: unavailable on visionOS, `main` deprecated in the 26 SDKs;
    /// `UITraitCollection.displayScale` is available on iOS, Mac Catalyst, tvOS and visionOS
    /// (docs/APPLE.md), and 0 where unspecified.
    static var screenScale: Double? {
        #if canImport(UIKit) && !os(watchOS)
        guard Thread.isMainThread else { return nil }
        return MainActor.assumeIsolated {
            let scale = Double(UITraitCollection.current.displayScale)
            return scale > 0 ? scale : nil
        }
        #elseif canImport(AppKit)
        guard Thread.isMainThread else { return nil }
        return MainActor.assumeIsolated { NSScreen.main.map { Double($0.backingScaleFactor) } }
        #else
        return nil
        #endif
    }

    /// UIKit's `userInterfaceIdiom`, spelt as its case name, read on the main thread only.
    static var idiomName: String? {
        #if canImport(UIKit) && !os(watchOS)
        guard Thread.isMainThread else { return nil }
        return MainActor.assumeIsolated {
            switch UIDevice.current.userInterfaceIdiom {
            case .phone: "phone"
            case .pad: "pad"
            case .tv: "tv"
            case .carPlay: "carPlay"
            case .mac: "mac"
            case .vision: "vision"
            default: nil
            }
        }
        #else
        return nil
        #endif
    }

    /// The hardware model (`iPad13,4`; on a simulator, the simulated one; `Mac15,3`), which
    /// any thread may read.
    static var hardwareModel: String? {
        // One variable, read as such: `ProcessInfo.environment` copies every one into a dictionary.
        if let simulated = getenv("SIMULATOR_MODEL_IDENTIFIER") { return String(cString: simulated) }
        #if os(macOS)
        var size = 0
        guard sysctlbyname("hw.model", nil, &size, nil, 0) == 0, size > 0 else { return nil }
        var bytes = [CChar](repeating: 0, count: size)
        guard sysctlbyname("hw.model", &bytes, &size, nil, 0) == 0 else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        #else
        var system = utsname()
        guard uname(&system) == 0 else { return nil }
        return withUnsafeBytes(of: &system.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #endif
    }

    /// An iOS app running on a Mac: Mac Catalyst, or an iPad app on Apple silicon.
    static var runningOnMac: Bool {
        #if os(iOS)
        return ProcessInfo.processInfo.isMacCatalystApp || ProcessInfo.processInfo.isiOSAppOnMac
        #else
        return false
        #endif
    }
}
