import Foundation

@testable import FreshAir

/// One libFuzzer binary for every parser that reads remote bytes; `FRESHAIR_FUZZ_TARGET`
/// chooses which one an execution feeds (scripts/fuzz sets it). Besides "no crash, no leak, no
/// sanitizer report", targets check properties a parser must keep (a parsed document
/// serializes and parses back to itself; an archive never writes outside its folder).
///
/// The same file is linked into FreshAirTests (Tests/FreshAirTests/Fuzzing), where
/// FuzzRegressionTests replays every seed and every input that once crashed.
enum FuzzTarget: String, CaseIterable {
    case json, manifest, condition
    case releaseNotes = "release-notes"
    case strings, xcstrings, path
    case tar, tgz, gzip, zip
    /// A `.tar` unpacked while its layout is recorded (``TarLayoutRecorder``), as a package is.
    case tarLayout = "tar-layout"
    case repositoryIndex = "repository-index"
    case httpDate = "http-date"
    case contentRange = "content-range"
    case keyDocument = "key-document"
    case chunkIndex = "chunk-index"
    case packageSignature = "package-signature"
    /// ``PrintableText``: nothing a terminal acts on survives it.
    case printableText = "printable-text"
    /// The check that refuses, unparsed, a document naming no signatures where keys are pinned.
    case signaturePrecheck = "signature-precheck"
    /// ``ISO8601Timestamp``: release expiry and publish history dates.
    case iso8601

    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["FRESHAIR_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            fatalError("set FRESHAIR_FUZZ_TARGET to one of: \(allCases.map(\.rawValue).joined(separator: " "))")
        }
        return target
    }()

    func run(_ bytes: [UInt8]) {
        let data = Data(bytes)
        switch self {
        case .json: json(bytes)
        case .manifest: manifest(data)
        case .condition: condition(bytes)
        case .releaseNotes:
            guard let notes = try? ReleaseNotes(data: data, source: "fuzz") else { return }
            _ = notes.updateStatus(current: Version("2.0")!, environment: Self.device)
            _ = notes.featuresNew(from: Version("1.0"), to: Version("9.9")!, environment: Self.device)
        case .strings: _ = try? StringsTable(stringsFile: data, source: "fuzz")
        case .xcstrings: _ = try? StringsTable(catalog: data, language: "en", source: "fuzz")
        case .path: path(bytes)
        case .tar: archive(bytes, .tar)
        case .tarLayout: archive(bytes, .tar, recordingLayout: true)
        case .tgz: archive(bytes, .tarGzip)
        case .gzip: archive(bytes, .gzip)
        case .zip: zip(data)
        case .repositoryIndex: _ = try? RepositoryIndex(data: data, source: "fuzz")
        case .httpDate: httpDate(bytes)
        case .contentRange: _ = ContentRange(String(decoding: bytes, as: UTF8.self))
        case .keyDocument: _ = try? KeyDocument(data: data, source: "fuzz")
        case .packageSignature: _ = try? PackageSignature(data: data, source: "fuzz")
        case .chunkIndex: chunkIndex(data)
        case .printableText: printableText(bytes)
        case .signaturePrecheck: signaturePrecheck(data)
        case .iso8601: iso8601(bytes)
        }
    }

    /// Escaped text holds no scalar a terminal would act on (line breaks only where asked to
    /// keep them), and text that needs no escape comes back unchanged.
    private func printableText(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        for keep in [false, true] {
            let shown = PrintableText.escaped(text, keepingLineBreaks: keep)
            precondition(
                !shown.unicodeScalars.contains { PrintableText.needsEscape($0, keepingLineBreaks: keep) },
                "a control survived escaping"
            )
            if !text.unicodeScalars.contains(where: { PrintableText.needsEscape($0, keepingLineBreaks: keep) }) {
                precondition(shown == text, "text with nothing to escape changed")
            }
        }
    }

    /// The pre-check never calls unsigned what a JSON reader finds a `signatures` member in,
    /// however the key is spelled, so a signed document is never refused unread.
    private func signaturePrecheck(_ data: Data) {
        let survey = Manifest.survey(data, maxEntries: 1_000, letGo: nil)
        precondition(RepositoryIndex.mayBeSigned(data) == !survey.isUnsigned, "two answers to one question")
        guard survey.isUnsigned, let document = try? JSONReader.parse(Array(data), lenient: true) else { return }
        precondition(document[ManifestSignature.member] == nil, "a document naming signatures was called unsigned")
        do {
            _ = try Manifest(data: data, source: "fuzz", maxEntries: 1_000, requireSignature: true)
            preconditionFailure("an unsigned document was read where a signature is required")
        } catch {
            precondition(error.problem == .unsigned, "refused for another reason first: \(error)")
        }
    }

    /// A timestamp read on bytes is written back as the same text, and reads back as the same
    /// instant; Foundation's fallback and the expiry reader take any text without trapping.
    private func iso8601(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        if let date = ISO8601Timestamp.parseUTCSeconds(text) {
            precondition(ISO8601Timestamp.format(date) == text, "\(text) is written back differently")
        }
        if let date = ISO8601Timestamp.parse(text), (0..<253_402_300_800).contains(date.timeIntervalSince1970) {
            let written = ISO8601Timestamp.format(date)
            precondition(
                ISO8601Timestamp.parse(written)?.timeIntervalSince1970 == date.timeIntervalSince1970.rounded(.down),
                "\(written) reads back as another second"
            )
        }
        let document = JSONValue.object([("files", .array([])), ("expires", .string(text))])
        _ = try? Manifest(data: Data(document.serializedBytes(indent: 0)), source: "fuzz")
    }

    /// A parsed index serializes to bytes that parse back to it; a plan with every block found
    /// copies every byte and fetches none, one with none found fetches the file in one range.
    private func chunkIndex(_ data: Data) {
        guard let index = try? ChunkIndex(data: data, source: "fuzz") else { return }
        guard let again = try? ChunkIndex(data: index.serialized(), source: "fuzz") else {
            fatalError("a serialized chunk index does not parse")
        }
        precondition(again == index, "a chunk index changed through a round trip")
        let inPlace = index.blocks.indices.map { Int64($0) * Int64(index.blockSize) }
        let (copies, fetches) = ChunkDelta.plan(new: index, found: .init(inPlace), mergeGap: 8 << 10)
        precondition(fetches.isEmpty, "a plan with every block found fetches")
        precondition(copies.count <= 1, "blocks found in place are not one copy")
        precondition(copies.reduce(Int64(0)) { $0 + $1.length } == index.fileSize, "a plan does not cover the file")
        let none = ChunkDelta.plan(
            new: index,
            found: .init(Array(repeating: nil, count: index.blocks.count)),
            mergeGap: 0
        )
        precondition(
            none.copies.isEmpty && none.fetches.count == min(1, index.blocks.count),
            "a plan with nothing found"
        )
        precondition(none.fetches.first.map { $0 == 0...(index.fileSize - 1) } ?? true, "a whole fetch is not the file")
    }

    static let device: ConditionEnvironment = {
        var environment = ConditionEnvironment()
        environment["platform"] = "iOS"
        environment["systemVersion"] = "17.2"
        environment["appVersion"] = "2.1"
        environment["locale"] = "pt_BR"
        environment["displayScale"] = 3
        environment["defaults"] = ["beta": true, "tier": "gold"]
        return environment
    }()

    /// Parsed JSON serializes to text that parses back to the same value.
    private func json(_ bytes: [UInt8]) {
        for lenient in [false, true] {
            guard let value = try? JSONReader.parse(bytes, lenient: lenient) else { continue }
            let again = value.serializedBytes(indent: 0)
            guard let reparsed = try? JSONReader.parse(again) else {
                fatalError("serialized JSON does not parse: \(again)")
            }
            precondition(reparsed == value, "JSON changed through a round trip")
        }
    }

    private func manifest(_ data: Data) {
        guard let manifest = try? Manifest(data: data, source: "fuzz") else { return }
        for entry in manifest.entries {
            _ = entry.condition.evaluate(in: Self.device)
            precondition(
                entry.path.components.allSatisfy { $0 != "." && $0 != ".." && !$0.isEmpty },
                "an unsafe path was accepted"
            )
        }
        _ = try? manifest.verify(KeySet(keys: [], threshold: 1), source: "fuzz")
    }

    /// Whatever the partial evaluation decides with every key known, full evaluation agrees.
    private func condition(_ bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self), let condition = try? Condition(parsing: text) else {
            return
        }
        let full = condition.evaluate(in: Self.device)
        if let partial = condition.evaluate(knowing: Self.device) {
            precondition(partial == full, "partial evaluation disagrees with evaluation for \(text)")
        }
        _ = condition.evaluate(knowing: ConditionEnvironment(["platform": "iOS"]))
        _ = condition.values(comparedWith: "platform")
    }

    /// A path that parses has no empty, `.` or `..` component, no NUL, and parses again to itself.
    private func path(_ bytes: [UInt8]) {
        guard let path = try? BundlePath(bytes: bytes) else { return }
        precondition(!path.string.utf8.contains(0), "NUL in an accepted path")
        precondition(path.components.allSatisfy { $0 != "." && $0 != ".." && !$0.isEmpty }, "unsafe component accepted")
        precondition((try? BundlePath(path.string)) == path, "a path does not parse back to itself")
        var names = PathCollisionsKeepingPaths()
        _ = try? names.insert(path)
        _ = try? names.insert(BundlePath(path.string.uppercased()))
    }

    private func httpDate(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let date = HTTPDate.parse(text) else { return }
        // What HTTPDate writes, it reads back to the same second.
        let written = HTTPDate.format(date)
        if let again = HTTPDate.parse(written), date.timeIntervalSince1970.magnitude < 1e11 {
            precondition(
                again.timeIntervalSince1970 == date.timeIntervalSince1970.rounded(.down),
                "\(written) reads back as \(again)"
            )
        }
    }

    /// Unpacks through the real extractor, fed in two chunks split where the first byte says;
    /// nothing may appear beside the destination folder. A layout recorded on the way covers
    /// every byte fed, and only files the archive installed.
    private func archive(_ bytes: [UInt8], _ format: ArchiveFormat, recordingLayout: Bool = false) {
        let (root, destination) = Scratch.fresh()
        guard
            let stream = try? ArchiveStream(
                format: format,
                destination: destination,
                singleFileName: "file",
                limits: Scratch.limits,
                recordingLayout: recordingLayout
            )
        else { return }
        defer {
            if let layout = stream.tarLayout {
                precondition(layout.size == Int64(bytes.count), "a layout does not cover the bytes fed")
                precondition(layout.segments.reduce(0) { $0 + $1.length } == layout.size, "segments do not add up")
            }
        }
        let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
        let records: [String: FileRecord]? = bytes.withUnsafeBytes { buffer in
            do {
                try stream.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<split]))
                try stream.feed(UnsafeRawBufferPointer(rebasing: buffer[split...]))
                return try stream.finish()
            } catch {
                return nil
            }
        }
        Scratch.check(root: root, destination: destination, records: records)
    }

    private func zip(_ data: Data) {
        let (root, destination) = Scratch.fresh()
        let file = root + "/input.zip"
        _ = FileManager.default.createFile(atPath: file, contents: data)
        let records = try? ArchiveReader.extract(
            file,
            format: .zip,
            into: destination,
            singleFileName: "file",
            limits: Scratch.limits
        )
        try? FileManager.default.removeItem(atPath: file)
        Scratch.check(root: root, destination: destination, records: records)
    }
}

/// A folder per process where archives are unpacked, emptied before each input.
enum Scratch {
    static let base = NSTemporaryDirectory() + "freshair-fuzz-\(getpid())"
    /// Small caps: a fuzzer's gzip bomb should cost milliseconds, not gigabytes.
    static let limits = ExtractionLimits(
        maxTotalBytes: 8 << 20,
        maxEntries: 2_000,
        maxExpansionRatio: 100,
        expansionAllowance: 1 << 20
    )

    static func fresh() -> (root: String, destination: String) {
        try? FileManager.default.removeItem(atPath: base)
        let destination = base + "/out"
        try! FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        return (base, destination)
    }

    /// Only the destination folder (and the zip input) may exist beside it, and every recorded
    /// file must be inside it.
    static func check(root: String, destination: String, records: [String: FileRecord]?) {
        let siblings = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        precondition(siblings.allSatisfy { $0 == "out" }, "an archive wrote beside its folder: \(siblings)")
        for path in records?.keys ?? [:].keys {
            precondition(
                FileManager.default.fileExists(atPath: destination + "/" + path),
                "a recorded file is missing: \(path)"
            )
        }
    }
}
