package import Foundation

/// Where an app's store lives on a platform and how the system should keep it: decided here
/// from the platform's name, so it is tested on Linux, and applied by ``FreshAirContent`` and by
/// a ``Repository`` made with its defaults.
///
/// Content is re-downloadable, so it is kept out of backups; the small state that must survive
/// a purge (``BundleStore/stateFolder``) is kept apart from it and is backed up. tvOS has no
/// persistent local storage beyond a small user-defaults domain: content lives in Caches there,
/// and a purge costs a download, never the anti-rollback floor held in the state folder (as
/// long as the system leaves Application Support alone, which tvOS does not promise).
package struct StoragePlan: Equatable, Sendable {
    package enum Location: Equatable, Sendable {
        /// `Library/Application Support`: kept until the app is deleted.
        case applicationSupport
        /// `Library/Caches`: the system may empty it when storage runs low.
        case caches
    }

    /// A Data Protection class, as `FileProtectionType` names them.
    package enum Protection: Equatable, Sendable {
        /// Readable from the first unlock after a restart until the next restart: a background
        /// sync works while the device is locked, but not before that first unlock.
        case completeUntilFirstUserAuthentication
    }

    /// Where versions live.
    package var content: Location
    /// Where the install ID, high-water marks, rotated keys and rollback memory live.
    package var state: Location
    /// Whether the content folder is marked `isExcludedFromBackup`.
    package var excludeContentFromBackup: Bool
    /// The class set on the store's folders (files created in them inherit it), or `nil`
    /// where the platform has none.
    package var protection: Protection?
    /// Whether the state files are also kept in the app's defaults (``StateMirror``): on
    /// tvOS, which may purge any folder.
    package var mirrorsStateInDefaults = false

    /// The plan for the platform the app was built for (`iOS`, `tvOS`, `macOS`, …). An iOS
    /// app on a Mac (Mac Catalyst, an iPad app on Apple silicon) keeps the iOS folders, its
    /// container being the iOS SDK's, but runs on a Mac volume, which has no Data Protection
    /// classes: it is treated as macOS there.
    package static func forPlatform(_ platform: String, runningOnMac: Bool = false) -> StoragePlan {
        // tvOS keeps content in Caches, which is never backed up: nothing to exclude there.
        let tvOS = platform == "tvOS"
        let runsOn = DeviceClass.platform(compiledFor: platform, runningOnMac: runningOnMac)
        return StoragePlan(
            content: tvOS ? .caches : .applicationSupport,
            state: .applicationSupport,
            excludeContentFromBackup: ["iOS", "visionOS", "watchOS", "macOS"].contains(platform),
            protection: DeviceClass.hasDataProtection(platform: runsOn) ? .completeUntilFirstUserAuthentication : nil,
            mirrorsStateInDefaults: tvOS
        )
    }

    /// The files of a ``BundleStore/stateFolder``.
    package static let stateFiles = ["install-id", "high-water.json", "keys.json", "rejected.json", "prompts.json"]

    /// The plan for this build.
    package static var current: StoragePlan {
        forPlatform(ConditionEnvironment.compiledPlatform, runningOnMac: DeviceTraits.runningOnMac)
    }

    /// `<location>/FreshAir/<name>` for content, `<location>/FreshAir/<name>.state` for state.
    package func folders(name: String, base: (Location) -> URL) -> (content: URL, state: URL) {
        let content = base(self.content).appendingPathComponent("FreshAir").appendingPathComponent(name)
        let state = base(self.state).appendingPathComponent("FreshAir").appendingPathComponent(name + ".state")
        return (content, state)
    }

    /// The system's folder for `location`, or the temporary folder where it has none.
    package static func systemFolder(_ location: Location) -> URL {
        let directory: FileManager.SearchPathDirectory =
            location == .caches ? .cachesDirectory : .applicationSupportDirectory
        return FileManager.default.urls(for: directory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
    }

    /// Creates the store's folders and applies the plan to them: the protection class on both,
    /// backup exclusion on the content. Apple platforms only; elsewhere the folders are made.
    package func prepare(_ store: BundleStore) throws {
        for folder in [store.root, store.stateFolder] { try Disk.createDirectory(folder.path) }
        // A store made by 0.1.0 kept its state in its root: moved, so the install ID (the
        // rollout bucket) and the anti-rollback floor stay what they were.
        if store.stateFolder != store.root {
            for name in Self.stateFiles {
                let old = store.root.appendingPathComponent(name).path
                let new = store.stateFolder.appendingPathComponent(name).path
                if Disk.exists(old), !Disk.exists(new) { try Disk.rename(old, to: new) }
            }
        }
        try prepare(content: [store.root], state: [store.stateFolder])
    }

    /// Creates `content` and `state` and applies the plan to them: the protection class on
    /// every one, backup exclusion on `content`. Apple platforms only; elsewhere the folders
    /// are made.
    package func prepare(content: [URL], state: [URL]) throws {
        for folder in content + state { try Disk.createDirectory(folder.path) }
        if let protection { try FileProtection.apply(protection, to: content + state) }
        if excludeContentFromBackup { try FileProtection.excludeFromBackup(content) }
    }
}
