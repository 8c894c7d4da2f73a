import Foundation
import Testing

/// The privacy manifest Apple requires of an SDK that calls required-reason APIs: in the
/// FreshAir target's resources, declaring every category the library's code calls.
@Suite("The privacy manifest declares what the library calls")
struct PrivacyManifestTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Apple's required-reason categories, each with the calls of it that could appear here.
    static let categories: [String: [String]] = [
        "NSPrivacyAccessedAPICategoryFileTimestamp": [
            "stat(", "lstat(", "fstat(", "fstatat(", "getattrlist(", "creationDate", "modificationDate",
            "contentModificationDateKey",
        ],
        "NSPrivacyAccessedAPICategorySystemBootTime": ["systemUptime", "mach_absolute_time("],
        "NSPrivacyAccessedAPICategoryDiskSpace": [
            "statfs(", "statvfs(", "fstatfs(", "volumeAvailableCapacity", "systemFreeSize", "systemSize",
        ],
        "NSPrivacyAccessedAPICategoryUserDefaults": ["UserDefaults"],
        "NSPrivacyAccessedAPICategoryActiveKeyboards": ["activeInputModes"],
    ]

    @Test(
        "Every category whose calls appear in Sources/FreshAir is declared with a reason, and none is declared unused"
    )
    func declaresWhatIsCalled() throws {
        let manifest = try #require(
            try PropertyListSerialization.propertyList(
                from: Data(contentsOf: Self.root.appendingPathComponent("Sources/FreshAir/PrivacyInfo.xcprivacy")),
                format: nil
            ) as? [String: Any]
        )
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyCollectedDataTypes"] as? [Any])?.isEmpty == true)
        let declared = (manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]] ?? []).reduce(
            into: [String: [String]]()
        ) {
            $0[$1["NSPrivacyAccessedAPIType"] as? String ?? ""] = $1["NSPrivacyAccessedAPITypeReasons"] as? [String]
        }
        var code = ""
        let sources = Self.root.appendingPathComponent("Sources/FreshAir")
        for case let file as URL in FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)!
        where file.pathExtension == "swift" {
            // Code, not comments: a line that starts with // says, it does not call.
            code += try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }.joined(separator: "\n")
        }
        for (category, calls) in Self.categories {
            let used = calls.filter { code.contains($0) }
            if used.isEmpty {
                #expect(declared[category] == nil, "\(category) is declared but nothing calls it")
            } else {
                #expect(declared[category]?.isEmpty == false, "\(category) is not declared, yet the code calls \(used)")
            }
        }
        #expect(declared["NSPrivacyAccessedAPICategoryFileTimestamp"] == ["C617.1"])
        // The app's own defaults, read and written by the app alone (tvOS's state mirror).
        #expect(declared["NSPrivacyAccessedAPICategoryUserDefaults"] == ["CA92.1"])
        // A resource of the FreshAir target, so that Xcode folds it into the app's privacy report.
        let package = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(package.contains(#"resources: [.copy("PrivacyInfo.xcprivacy")]"#))
    }
}
