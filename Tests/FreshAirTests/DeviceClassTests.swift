import Foundation
import Testing

@testable import FreshAir

@Suite("The device and platform conditions see, from what the system reports")
struct DeviceClassTests {
    @Test("UIKit's idioms become asset-catalog device names; an unknown idiom falls back")
    func idioms() {
        #expect(DeviceClass.name(idiom: "phone") == "iphone")
        #expect(DeviceClass.name(idiom: "pad") == "ipad")
        #expect(DeviceClass.name(idiom: "mac") == "mac")
        #expect(DeviceClass.name(idiom: "tv") == "tv")
        #expect(DeviceClass.name(idiom: "vision") == "vision")
        #expect(DeviceClass.name(idiom: "carPlay") == "iphone")
        #expect(DeviceClass.name(idiom: "unspecified") == nil)
    }

    @Test("a hardware model names its class on any thread; a CPU architecture names none")
    func hardwareModels() {
        #expect(DeviceClass.name(hardwareModel: "iPad13,4") == "ipad")
        #expect(DeviceClass.name(hardwareModel: "iPhone16,2") == "iphone")
        #expect(DeviceClass.name(hardwareModel: "iPod9,1") == "iphone")
        #expect(DeviceClass.name(hardwareModel: "AppleTV14,1") == "tv")
        #expect(DeviceClass.name(hardwareModel: "RealityDevice14,1") == "vision")
        #expect(DeviceClass.name(hardwareModel: "Mac15,3") == "mac")
        #expect(DeviceClass.name(hardwareModel: "MacBookPro18,1") == "mac")
        #expect(DeviceClass.name(hardwareModel: "iMac21,1") == "mac")
        #expect(DeviceClass.name(hardwareModel: "arm64") == nil)
        #expect(DeviceClass.name(hardwareModel: "x86_64") == nil)
    }

    @Test("an iOS app on a Mac is macOS to conditions, the platform its systemVersion is from")
    func platformOnMac() {
        #expect(DeviceClass.platform(compiledFor: "iOS", runningOnMac: true) == "macOS")
        #expect(DeviceClass.platform(compiledFor: "iOS", runningOnMac: false) == "iOS")
        #expect(DeviceClass.platform(compiledFor: "tvOS", runningOnMac: false) == "tvOS")
        #expect(DeviceClass.fallback(platform: "iOS") == "iphone")
        #expect(DeviceClass.fallback(platform: "macOS") == "mac")
        #expect(DeviceClass.fallback(platform: "Linux") == "desktop")
    }

    @Test("current() on this machine: a device class, a whole display scale, the platform")
    func currentHere() {
        let environment = ConditionEnvironment.current(appVersion: "3.1")
        #expect(environment["platform"]?.text == "Linux")
        #expect(environment["device"]?.text == "desktop")
        #expect(environment["displayScale"]?.text == "1")
        #expect(environment["version"]?.text == "3.1")
    }

    @Test("the model's phase follows the events; a plan with nothing to fetch changes no phase")
    func modelPhases() {
        func name(_ phase: ContentModel.Phase?) -> String {
            switch phase {
            case nil: "none"
            case .idle?: "idle"
            case .checking?: "checking"
            case .downloading(let done, let total)?: "downloading \(done)/\(total.map(String.init) ?? "?")"
            case .current(let version)?: "current \(version.map(String.init) ?? "-")"
            case .failed?: "failed"
            }
        }
        let url = URL(string: "https://cdn.example.com/App.freshair/manifest.json")!
        let progress = SyncProgress(filesCompleted: 1, filesTotal: 3, bytesReceived: 700, bytesExpected: 2100)
        let fetching = SyncPlanSummary(filesToDownload: 3, filesToKeep: 1, filesToRemove: 0, bytesToDownload: 2100)
        let keeping = SyncPlanSummary(filesToDownload: 0, filesToKeep: 4, filesToRemove: 1, bytesToDownload: 0)
        #expect(name(ContentModel.phase(after: .checking(url))) == "checking")
        #expect(name(ContentModel.phase(after: .planned(fetching))) == "downloading 0/2100")
        #expect(name(ContentModel.phase(after: .planned(keeping))) == "none")
        #expect(name(ContentModel.phase(after: .progress(progress))) == "downloading 700/2100")
        #expect(name(ContentModel.phase(after: .notModified)) == "none")
        #expect(name(ContentModel.phase(after: .activated(version: 2))) == "none")
    }

    @Test("the store's folder is named after the remote bundle")
    func names() {
        #expect(FreshAirContent.name(of: URL(string: "https://cdn.example.com/App.freshair/")!) == "App")
        #expect(
            FreshAirContent.name(of: URL(string: "https://cdn.example.com/v2/Levels.freshair/manifest.json")!)
                == "Levels"
        )
        #expect(FreshAirContent.name(of: URL(string: "https://cdn.example.com/")!) == "Content")
        let content = FreshAirContent(remote: URL(string: "https://cdn.example.com/App.freshair/")!)
        #expect(content.store.root.path.hasSuffix("/FreshAir/App"))
        #expect(content.store.stateFolder.path.hasSuffix("/FreshAir/App.state"))
    }
}
