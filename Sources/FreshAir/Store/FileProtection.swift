import Foundation

/// How the system keeps the store's folders: their Data Protection class and whether backups
/// include them. The Apple seam for file protection: Foundation's resource values on Apple
/// platforms, nothing elsewhere (Linux has neither); which class and which folders is
/// `StoragePlan`'s decision, tested here.
enum FileProtection {
    /// Gives every folder of `folders` the class `protection` (files made in them inherit it).
    static func apply(_ protection: StoragePlan.Protection, to folders: [URL]) throws {
        #if canImport(Darwin)
        let type: FileProtectionType =
            switch protection {
            case .completeUntilFirstUserAuthentication: .completeUntilFirstUserAuthentication
            }
        for folder in folders {
            do {
                try FileManager.default.setAttributes([.protectionKey: type], ofItemAtPath: folder.path)
            } catch {
                throw FreshAirError.fileSystem(
                    operation: "set Data Protection class",
                    path: folder.path,
                    reason: error.localizedDescription,
                    underlying: error
                )
            }
        }
        #endif
    }

    /// Marks every folder of `folders` excluded from backups: it can be downloaded again.
    static func excludeFromBackup(_ folders: [URL]) throws {
        #if canImport(Darwin)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        for folder in folders {
            var folder = folder
            do { try folder.setResourceValues(values) } catch {
                throw FreshAirError.fileSystem(
                    operation: "exclude from backup",
                    path: folder.path,
                    reason: error.localizedDescription,
                    underlying: error
                )
            }
        }
        #endif
    }
}
