import Foundation

extension BundleStore {
    /// A random identifier for this install, created on first use and kept in the store's
    /// ``stateFolder`` (`install-id`); `RolloutBucket` derives from it. Two processes asking at
    /// once get the same.
    public func installID() throws -> String {
        let path = stateFolder.appendingPathComponent("install-id").path
        if let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }),
            !text.isEmpty
        {
            return text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        try Disk.createDirectory(stateFolder.path)
        // Written whole beside it, then linked in: the first link wins, and nobody reads half an ID.
        let candidate = path + ".\(UUID().uuidString)"
        try Disk.writeAtomically(Data(UUID().uuidString.utf8), to: candidate)
        defer { try? Disk.remove(candidate) }
        if link(candidate, path) != 0, errno != EEXIST { throw Disk.failure("create", path) }
        return String(decoding: try Disk.read(path), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
