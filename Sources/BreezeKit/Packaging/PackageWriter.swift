package import Foundation
import FreshAir

/// Writes a folder as a package FreshAir installs: a `.tgz` (ustar, with pax headers for
/// long names), streamed file by file, in sorted order so that the same folder gives the same
/// archive contents. Optionally writes the `.meta` sidecar that lets an app treat a bundled
/// copy as a version of that date.
package enum PackageWriter {
    /// What was packed.
    package struct Summary: Sendable {
        package var files: Int
        package var bytes: Int64
        /// The latest modification time among the files, as an HTTP date (for `.meta`).
        package var lastModified: String
    }

    /// Packs `folder` into `output` (`.tgz`/`.tar.gz`, or `.tar` uncompressed), making the
    /// folder it goes in. The package is written beside `output` and renamed over it when
    /// whole: a server publishing that folder never serves half of one, and a failure leaves
    /// the earlier package as it was.
    /// - Parameter topLevelFolder: a folder name to put everything under (`cats-3/`), or `nil`.
    @discardableResult
    package static func write(
        folder: URL,
        to output: URL,
        topLevelFolder: String? = nil,
        meta: Bool = false
    ) throws -> Summary {
        let output = output.standardizedFileURL
        let destination = output.deletingLastPathComponent()
        // Both refusals come before any folder is made (a repository's, say).
        if BundleFolder.lies(destination, inside: folder) {
            throw PackagingError(
                "\(output.path) is inside \(folder.path), the folder being packed: each package would hold the one before; write it elsewhere, such as site/\(output.lastPathComponent)",
                kind: .content
            )
        }
        let files = try BundleFolder.files(in: folder)
        try DeviceFileNames.check(files, in: folder)
        do {
            try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        } catch {
            throw PackagingError(
                "could not create the folder \(destination.path) for \(output.lastPathComponent)",
                kind: .cannotWrite
            )
        }
        let partial = destination.appendingPathComponent(".\(output.lastPathComponent).\(getpid()).partial").path
        let summary: Summary
        do {
            summary = try pack(
                files,
                of: folder,
                into: partial,
                compressed: !output.lastPathComponent.lowercased().hasSuffix(".tar"),
                topLevelFolder: topLevelFolder
            )
            guard rename(partial, output.path) == 0 else {
                throw PackagingError(
                    "could not move the package into place at \(output.path): \(String(cString: strerror(errno)))",
                    kind: .cannotWrite
                )
            }
        } catch {
            unlink(partial)
            throw error
        }
        if meta {
            let data = try JSONSerialization.data(withJSONObject: ["Last-Modified": summary.lastModified])
            try data.write(to: URL(fileURLWithPath: output.path + ".meta"), options: .atomic)
        }
        return summary
    }

    /// Writes `files` of `folder` as a tar archive (gzipped when `compressed`) at `path`.
    private static func pack(
        _ files: [BundleFolder.File],
        of folder: URL,
        into path: String,
        compressed: Bool,
        topLevelFolder: String?
    ) throws -> Summary {
        let sink: TarSink = compressed ? .gzip(try GzipWriter(path: path)) : .plain(try createFile(path))
        var writer = TarWriter(sink: sink)
        var latest = Date(timeIntervalSince1970: 0)
        var bytes: Int64 = 0
        let prefix = topLevelFolder.map { $0 + "/" } ?? ""
        if let topLevelFolder { try writer.addDirectory(topLevelFolder, modified: Date()) }
        var madeFolders: Set<String> = []
        for file in files {
            var folderPath = ""
            for component in file.path.split(separator: "/").dropLast() {
                folderPath += (folderPath.isEmpty ? "" : "/") + component
                if madeFolders.insert(folderPath).inserted {
                    try writer.addDirectory(prefix + folderPath, modified: file.modified)
                }
            }
            try writer.addFile(
                prefix + file.path,
                from: folder.appendingPathComponent(file.path),
                size: file.size,
                modified: file.modified,
                executable: file.executable
            )
            latest = max(latest, file.modified)
            bytes += file.size
        }
        try writer.finish()
        return Summary(files: files.count, bytes: bytes, lastModified: HTTPDate.format(latest))
    }

    /// Creates (or empties) `path` for writing, saying why when it cannot.
    static func createFile(_ path: String) throws -> FileHandle {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw PackagingError("could not create \(path): \(String(cString: strerror(errno)))", kind: .cannotWrite)
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }
}

/// The files of a content folder, as authoring commands see them: sorted, regular files
/// only, junk (`.DS_Store`, editor backups) and hidden names (`.git/`, `.env`) skipped.
package enum BundleFolder {
    package struct File: Sendable {
        package var path: String
        package var size: Int64
        package var modified: Date
        package var executable: Bool
    }

    package static func isJunk(_ name: String) -> Bool {
        name == ".DS_Store" || name.hasSuffix("~") || name.hasPrefix(".#") || name.hasSuffix(".swp")
            || name == "Thumbs.db"
    }

    /// - Parameter includingHidden: list names that start with `.` too (a published folder's
    ///   own leftovers); authoring never does: `breeze generate` listed `.git/config` and
    ///   `.env`, which `publish` then left out, so every device's sync failed on them, and
    ///   `breeze package` packed them.
    package static func files(in folder: URL, includingHidden: Bool = false) throws -> [File] {
        let root = folder.standardizedFileURL.resolvingSymlinksInPath()
        guard
            let walker = FileManager.default.enumerator(
                at: root,
                includingPropertiesForKeys: [
                    .isRegularFileKey, .fileSizeKey, .contentModificationDateKey, .isExecutableKey,
                ]
            )
        else { throw PackagingError("cannot read \(folder.path)") }
        var files: [File] = []
        while let url = walker.nextObject() as? URL {
            if !includingHidden, url.lastPathComponent.hasPrefix(".") {
                walker.skipDescendants()
                continue
            }
            let values: URLResourceValues
            do {
                values = try url.resourceValues(forKeys: [
                    .isRegularFileKey, .fileSizeKey, .contentModificationDateKey, .isExecutableKey,
                ])
            } catch  where isGone(error) {
                // Renamed or removed between the folder's listing and this look (another
                // publish's temporary file, put in place): not there, so not listed.
                continue
            }
            guard values.isRegularFile == true, !isJunk(url.lastPathComponent) else { continue }
            let path = String(url.standardizedFileURL.resolvingSymlinksInPath().path.dropFirst(root.path.count + 1))
            files.append(
                File(
                    path: path,
                    size: Int64(values.fileSize ?? 0),
                    modified: values.contentModificationDate ?? Date(),
                    executable: values.isExecutable ?? false
                )
            )
        }
        return files.sorted { $0.path < $1.path }
    }

    /// Whether `error` says the file is not there (any more).
    static func isGone(_ error: any Error) -> Bool {
        let error = error as NSError
        if error.domain == NSPOSIXErrorDomain { return error.code == Int(ENOENT) }
        if error.domain == NSCocoaErrorDomain,
            error.code == CocoaError.fileReadNoSuchFile.rawValue
                || error.code == CocoaError.fileNoSuchFile.rawValue
        {
            return true
        }
        return (error.userInfo[NSUnderlyingErrorKey] as? NSError).map(isGone) ?? false
    }

    /// Whether `path` is `folder` or lies inside it, links resolved, `path` made or not yet:
    /// what a folder would hold if something were written there.
    package static func lies(_ path: URL, inside folder: URL) -> Bool {
        let folder = folder.standardizedFileURL.resolvingSymlinksInPath().path
        // A path not made yet: its nearest existing folder resolved, the rest as written.
        let existing = nearestExisting(path)
        let rest = path.standardizedFileURL.path.dropFirst(existing.path.count)
        return (existing.resolvingSymlinksInPath().path + rest + "/").hasPrefix(folder + "/")
    }

    /// `path` when it exists, else the nearest of its parents that does (`/` at the last).
    package static func nearestExisting(_ path: URL) -> URL {
        var existing = path.standardizedFileURL
        while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" {
            existing.deleteLastPathComponent()
        }
        return existing
    }

    /// SHA-256 over every file's path and digest: equal exactly when the content is equal.
    package static func digest(of folder: URL) throws -> String {
        var hasher = ContentHasher(.sha256)
        for file in try files(in: folder) {
            let (hash, _) = try FileDigests.digest(of: folder.appendingPathComponent(file.path), using: .sha256)
            hasher.update(Array("\(file.path)\0\(hash.hex)\n".utf8))
        }
        return hasher.finalize().hex
    }
}

enum TarSink {
    case gzip(GzipWriter)
    case plain(FileHandle)

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        switch self {
        case .gzip(let writer): try writer.write(bytes)
        case .plain(let handle): try handle.write(contentsOf: bytes)
        }
    }

    func finish() throws {
        switch self {
        case .gzip(let writer): try writer.finish()
        case .plain(let handle): try handle.close()
        }
    }
}

/// ustar headers, with a pax `path` record when a name does not fit.
struct TarWriter {
    let sink: TarSink

    mutating func addDirectory(_ path: String, modified: Date) throws {
        try header(path + "/", size: 0, type: UInt8(ascii: "5"), mode: 0o755, modified: modified)
    }

    mutating func addFile(_ path: String, from url: URL, size: Int64, modified: Date, executable: Bool) throws {
        try header(path, size: size, type: UInt8(ascii: "0"), mode: executable ? 0o755 : 0o644, modified: modified)
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var written: Int64 = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            let take = chunk.prefix(Int(size - written))
            try take.withUnsafeBytes { try sink.write($0) }
            written += Int64(take.count)
            if written == size { break }
        }
        guard written == size else {
            throw PackagingError("\(url.path) changed while it was being packed", kind: .content)
        }
        try pad(size)
    }

    func finish() throws {
        try [UInt8](repeating: 0, count: 1024).withUnsafeBytes { try sink.write($0) }
        try sink.finish()
    }

    private func header(_ path: String, size: Int64, type: UInt8, mode: Int, modified: Date) throws {
        let name = Array(path.utf8)
        if name.count > 100 {
            // A pax extended header carries the full path; the ustar name is a truncated stand-in.
            var record = " path=\(path)\n"
            var length = record.utf8.count
            while "\(length)".utf8.count + record.utf8.count != length {
                length = "\(length)".utf8.count + record.utf8.count
            }
            record = "\(length)" + record
            try block(
                name: Array("PaxHeader/\(name.count)".utf8),
                size: Int64(record.utf8.count),
                type: UInt8(ascii: "x"),
                mode: 0o644,
                modified: modified
            )
            try Array(record.utf8).withUnsafeBytes { try sink.write($0) }
            try pad(Int64(record.utf8.count))
        }
        try block(name: Array(name.prefix(100)), size: size, type: type, mode: mode, modified: modified)
    }

    private func block(name: [UInt8], size: Int64, type: UInt8, mode: Int, modified: Date) throws {
        var header = [UInt8](repeating: 0, count: 512)
        func put(_ bytes: [UInt8], at offset: Int) {
            for (index, byte) in bytes.enumerated() { header[offset + index] = byte }
        }
        func octal(_ value: Int64, width: Int) -> [UInt8] {
            Array(String(value, radix: 8).zeroPadded(to: width - 1).utf8) + [0]
        }
        put(name, at: 0)
        put(octal(Int64(mode), width: 8), at: 100)
        put(octal(0, width: 8), at: 108)
        put(octal(0, width: 8), at: 116)
        put(octal(size, width: 12), at: 124)
        put(octal(Int64(modified.timeIntervalSince1970), width: 12), at: 136)
        put(Array("        ".utf8), at: 148)
        header[156] = type
        put(Array("ustar\0".utf8), at: 257)
        put(Array("00".utf8), at: 263)
        let checksum = header.reduce(0) { $0 + Int64($1) }
        put(Array(String(checksum, radix: 8).zeroPadded(to: 6).utf8) + [0, UInt8(ascii: " ")], at: 148)
        try header.withUnsafeBytes { try sink.write($0) }
    }

    private func pad(_ size: Int64) throws {
        let padding = Int((512 - size % 512) % 512)
        if padding > 0 { try [UInt8](repeating: 0, count: padding).withUnsafeBytes { try sink.write($0) } }
    }
}
