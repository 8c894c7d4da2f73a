import Foundation

/// What ``BundleStore/verify()`` found: every file of the live version re-hashed against the
/// digest it was verified to have when it was installed.
public struct VerificationReport: Sendable, Hashable, Codable {
    /// The live version that was checked.
    public var version: Int
    /// Files re-hashed.
    public var filesChecked: Int
    /// Bytes read to re-hash them.
    public var bytesChecked: Int64
    /// Recorded files that are gone (or are no longer regular files).
    public var missing: [String]
    /// Recorded files whose bytes differ from what was installed.
    public var changed: [String]
    /// Regular files in the version that no install put there.
    public var extra: [String]

    /// Nothing missing, changed or extra.
    public var isIntact: Bool { missing.isEmpty && changed.isEmpty && extra.isEmpty }

    /// One line for a person: "intact" or what is wrong.
    public var oneLine: String {
        if isIntact {
            return "Version \(version) is intact: \(Self.files(filesChecked)), \(ByteCount(bytesChecked)) re-hashed."
        }
        let parts = [("missing", missing), ("changed", changed), ("extra", extra)].filter { !$0.1.isEmpty }.map {
            "\($0.1.count) \($0.0)"
        }
        return
            "Version \(version) is damaged: \(parts.joined(separator: ", ")) of \(Self.files(filesChecked)); the next sync repairs it."
    }

    private static func files(_ count: Int) -> String { count == 1 ? "1 file" : "\(count) files" }
}

extension BundleStore {
    /// Re-hashes the live version against its record and reports every missing, changed or
    /// extra file.
    ///
    /// Damage is also remembered in the store, so that the next update repairs it: a bundle
    /// sync downloads just the damaged files again (and re-plans even when the server answers
    /// `304`), a package or repository bundle is downloaded whole again. Verification reads the
    /// live version without the store's lock, like any reader.
    ///
    /// - Returns: `nil` when nothing is installed.
    public func verify() throws -> VerificationReport? {
        guard let id = liveVersionID else { return nil }
        let record = try record(id)
        let folder = versionPath(id)
        var report = VerificationReport(
            version: id,
            filesChecked: 0,
            bytesChecked: 0,
            missing: [],
            changed: [],
            extra: []
        )
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 16)
        defer { buffer.deallocate() }
        for entry in record.fileTable.entries {
            let (path, expected) = (entry.path, entry.record)
            report.filesChecked += 1
            let full = folder + "/" + path
            // Disk.status answers for regular files only: a link or folder in its place is missing.
            guard Disk.status(full) != nil,
                let (digest, size) = try Disk.hashIfPresent(full, algorithm: expected.hash.algorithm, buffer: buffer)
            else {
                report.missing.append(path)
                continue
            }
            report.bytesChecked += size
            if digest != expected.hash || size != expected.size { report.changed.append(path) }
        }
        _ = try TreeWalk.files(under: folder) { path in
            if record.file(at: path) == nil && !Self.isSystemLitter(path) { report.extra.append(path) }
        }
        report.extra.sort()
        try writeDamage(
            report.isIntact ? nil : DamageMarks(version: id, paths: report.missing + report.changed + report.extra)
        )
        return report
    }

    /// Paths of the live version that ``verify()`` found damaged, for the next update to
    /// replace; empty when none are known (or they belong to a version no longer live).
    func damagedPaths(of version: Int?) -> Set<String> {
        guard let version, let data = FileManager.default.contents(atPath: damagePath),
            let marks = try? JSONDecoder().decode(DamageMarks.self, from: data), marks.version == version
        else { return [] }
        return Set(marks.paths)
    }

    /// Whether ``verify()`` found the live version damaged: the next update installs it anew.
    var liveVersionIsDamaged: Bool { !damagedPaths(of: liveVersionID).isEmpty }

    var damagePath: String { root.appendingPathComponent("damaged.json").path }

    private func writeDamage(_ marks: DamageMarks?) throws {
        guard let marks else {
            try Disk.remove(damagePath)
            return
        }
        try Disk.createDirectory(root.path)
        try Disk.writeAtomically(try JSONEncoder().encode(marks), to: damagePath)
    }

    /// Files the system leaves in any folder a person opens (Finder's `.DS_Store`, its
    /// AppleDouble `._name` and folder `Icon\r` files): not damage when a version does not
    /// list them, since a Mac user browsing the live folder would otherwise mark it damaged.
    static func isSystemLitter(_ path: String) -> Bool {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        return name == ".DS_Store" || name == "Icon\r" || name.hasPrefix("._")
    }
}

/// `damaged.json`: what the last verification found wrong with which version.
private struct DamageMarks: Codable {
    var version: Int
    var paths: [String]
}
