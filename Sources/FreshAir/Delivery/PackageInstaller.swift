package import Foundation

/// Turns a verified package file into installed content.
///
/// The default, `ExtractingInstaller`, unpacks it into the version being assembled. An app
/// that keeps content elsewhere (loading a database, say) supplies its own: it installs from
/// the file, and answers whether an earlier install is still present.
package protocol PackageInstaller: Sendable {
    /// Installs `package` (of `format`) into `folder`, the next version being assembled.
    /// Throwing refuses the package; the live version stays as it was.
    ///
    /// - Returns: the files written into `folder` and their digests (empty when the
    ///   installer keeps its content elsewhere).
    func install(package: URL, format: ArchiveFormat, into folder: URL) async throws -> [String: FileRecord]

    /// Whether content from an earlier install is present. `liveFolder` is the live version's
    /// folder, or `nil` when none is installed.
    func packageExists(liveFolder: URL?) -> Bool
}

extension PackageInstaller {
    /// ``install(package:format:into:)``, its errors naming `source`, where the package came
    /// from (its URL, or the bundled copy's path), not the partial file it was downloaded to.
    /// Packages and repository bundles install through here.
    func install(
        package: URL,
        from source: String,
        format: ArchiveFormat,
        into folder: String
    ) async throws -> [String: FileRecord] {
        do {
            return try await install(package: package, format: format, into: URL(fileURLWithPath: folder))
        } catch let failure as FreshAirError {
            throw failure.namingPackage(source)
        }
    }
}

/// Unpacks `.tgz`/`.tar.gz`, `.tar`, `.gz` and `.zip` packages into the version folder,
/// refusing hostile entries (see docs/SECURITY.md: paths, links, sizes, expansion).
package struct ExtractingInstaller: PackageInstaller {
    /// What an archive may hold: sizes, entries, expansion, links.
    package var limits: ExtractionLimits
    /// When the archive holds exactly this one top-level folder (`cats-3/` in `cats-3.tar.gz`),
    /// its contents become the version's root.
    package var topLevelFolderToStrip: String?
    /// The name for a plain `.gz` package's one file (`content.json` for `content.json.gz`).
    package var singleFileName: String

    /// Unpacks within `limits`; strips `topLevelFolderToStrip` when it is the archive's only
    /// folder; names a plain `.gz`'s one file `singleFileName`.
    package init(
        limits: ExtractionLimits = ExtractionLimits(),
        topLevelFolderToStrip: String? = nil,
        singleFileName: String = "content"
    ) {
        self.limits = limits
        self.topLevelFolderToStrip = topLevelFolderToStrip
        self.singleFileName = singleFileName
    }

    package func install(package: URL, format: ArchiveFormat, into folder: URL) async throws -> [String: FileRecord] {
        do {
            // Unpacking blocks on the disk and the inflater: done on the blocking pool.
            return try await BlockingPool.run { [self] in
                let records = try ArchiveReader.extract(
                    package.path,
                    format: format,
                    into: folder.path,
                    singleFileName: singleFileName,
                    limits: limits
                )
                return try stripTopLevelFolder(in: folder, records)
            }
        } catch let error as ArchiveError {
            throw FreshAirError.archive(error, package: package.lastPathComponent)
        }
    }

    /// Moves the contents of the single top-level folder up, when the archive has one by
    /// that name.
    func stripTopLevelFolder(in folder: URL, _ records: [String: FileRecord]) throws -> [String: FileRecord] {
        guard let top = topLevelFolderToStrip, Disk.contentsOfDirectory(folder.path) == [top],
            Disk.isDirectory(folder.path + "/" + top)
        else {
            return records
        }
        for name in Disk.contentsOfDirectory(folder.path + "/" + top) {
            try Disk.rename(folder.path + "/" + top + "/" + name, to: folder.path + "/" + name)
        }
        try Disk.remove(folder.path + "/" + top)
        return Dictionary(uniqueKeysWithValues: records.map { (String($0.key.dropFirst(top.count + 1)), $0.value) })
    }

    package func packageExists(liveFolder: URL?) -> Bool {
        liveFolder.map { Disk.isDirectory($0.path) } ?? false
    }
}

/// Unpacks a `.tgz`, `.tar` or `.gz` into the version folder while it downloads (or while a
/// delta rebuilds it), so the network and the unpacking overlap instead of taking turns, and a
/// `.tar` is read once: its `TarLayout` is recorded on the way.
///
/// Unchecked `Sendable`: one thread at a time feeds it, the download's writing lane or a
/// delta's assembly pass, and its owner reads the result after that thread is done. Its
/// `ArchiveStream` writes files on a thread of its own until ``settle()``.
final class StreamingExtraction: DownloadTee, @unchecked Sendable {
    private let installer: ExtractingInstaller
    private let format: ArchiveFormat
    private let folder: URL
    private let package: String
    private var stream: ArchiveStream?

    /// `nil` for formats that need the whole file (`.zip`).
    init?(installer: ExtractingInstaller, format: ArchiveFormat, folder: URL, package: String) {
        guard format != .zip else { return nil }
        self.installer = installer
        self.format = format
        self.folder = folder
        self.package = package
    }

    func restart() throws {
        stream = nil  // its writer stops before the folder is emptied
        try Disk.empty(folder.path)
        stream = try ArchiveStream(
            format: format,
            destination: folder.path,
            singleFileName: installer.singleFileName,
            limits: installer.limits,
            recordingLayout: true
        )
    }

    func consume(_ bytes: UnsafeRawBufferPointer) throws {
        try namingPackage { try stream?.feed(bytes) }
    }

    func settle() throws {
        try namingPackage { try stream?.settle() }
    }

    /// The `.tar`'s layout once ``finish()`` succeeded (see `ArchiveStream/tarLayout`).
    var tarLayout: TarLayout? { stream?.tarLayout }

    func finish() throws -> [String: FileRecord] {
        try namingPackage {
            guard let stream else { throw ArchiveError(.truncated, "nothing was received") }
            return try installer.stripTopLevelFolder(in: folder, try stream.finish())
        }
    }

    /// Runs `body`, an archive's error reported as the package's.
    private func namingPackage<Result>(_ body: () throws -> Result) throws -> Result {
        do { return try body() } catch let error as ArchiveError {
            throw FreshAirError.archive(error, package: package)
        }
    }
}
