package import Foundation

/// A bundle's `manifest.json`: the files it offers, each with a hash and a condition.
///
/// Every form on servers loads unchanged:
/// - the legacy JSON array of entries, each with `filename`, `sha` or `SHA` (40 hex digits for
///   SHA-1, 64 for SHA-256, or absent: existence suffices), and `condition` (a string) or
///   `conditions` (an array of `{"key", "value", "comparison"}`, `comparison` defaulting to
///   `gte`);
/// - the object form `{"format": 2, "sequence": 7, "expires": "…", "files": [ …entries… ]}`,
///   whose entries may also give `size` in bytes, and whose root may carry `signatures`
///   (see `ManifestSignature`).
package struct Manifest: Sendable, Hashable {
    /// Which of the accepted shapes the document had.
    package enum Form: Sendable, Hashable {
        /// The original FreshAir form: a bare array of entries.
        case legacyArray
        /// An object with `files` (and release fields), of `format` version.
        case object(format: Int)
    }

    /// The form the document was written in, kept when it is rewritten.
    package var form: Form
    /// The entries in document order.
    package var entries: [ManifestEntry]
    /// Identity, sequence, expiry and signatures (object form; see `ReleaseFields`).
    package var release = ReleaseFields()
    /// Where the files are on the server (object form's `layout`; see `ContentLayout`).
    /// Only a root manifest's counts: it decides for the whole tree.
    package var layout = ContentLayout.paths
    /// A tar of small files a first sync may fetch in one request (object form's `pack`; see
    /// `FilePack`). Only a root manifest's counts.
    package var pack: FilePack?

    /// The publisher's sequence number (object form), for anti-rollback.
    package var sequence: Int? {
        get { release.sequence }
        set { release.sequence = newValue }
    }
    /// When the manifest stops being trustworthy (object form).
    package var expires: Date? {
        get { release.expires }
        set { release.expires = newValue }
    }
    /// What the manifest says it is (`breeze sign` writes the bundle folder's name). With keys
    /// pinned it must be what the app expects, so a signature on one bundle cannot install another.
    package var identity: String? { release.identity }
    /// Ed25519 signatures over the manifest; checked against ``SyncConfiguration/trustedKeys``.
    package var signatures: [ManifestSignature] { release.signatures }
    /// What ``signatures`` cover (see `ManifestSignature/message(for:)`).
    package var signedMessage: [UInt8]? { release.signedMessage }

    /// The members FreshAir reads in the object form's top level, and `staged`, which breeze
    /// writes for itself (a staged release's previous files) and devices ignore; `breeze
    /// validate` warns about any other (a misspelt `expires` would otherwise go unnoticed).
    package static let knownMembers: Set<String> = [
        "format", "files", "identity", "sequence", "expires", ManifestSignature.member,
        ContentLayout.member, ContentLayout.locationMember, FilePack.member, "staged",
    ]

    /// An in-memory manifest.
    package init(entries: [ManifestEntry], form: Form = .legacyArray, sequence: Int? = nil, expires: Date? = nil) {
        self.entries = entries
        self.form = form
        release = ReleaseFields(sequence: sequence, expires: expires)
    }

    /// Reads a manifest document.
    ///
    /// - Parameters:
    ///   - data: the document's bytes, as served.
    ///   - source: where it came from (a URL or path), named in errors.
    /// - Throws: `ManifestError` naming the source, the entry and what is wrong.
    package init(data: Data, source: String) throws(ManifestError) {
        try self.init(data: data, source: source, maxEntries: .max)
    }

    /// Reads a manifest document of at most `maxEntries` entries: a longer list is refused at
    /// the first entry past the cap, so a tree's cap on entries bounds the memory entries take.
    ///
    /// Entries are read as the parser reaches them, each turned into a `ManifestEntry` and its
    /// JSON let go: the document's list is never a tree of values (for 100,000 entries, 37 MB).
    ///
    /// `letGo`, when given, is told as the list is read that the bytes before an offset are not
    /// needed again soon: a mapped document hands their pages back (see `MappedFile`).
    /// `taker`, when given, is offered each entry as it is read; the entries it takes are not in
    /// ``entries``, which holds the rest. `requireSignature` refuses, before any parse, a
    /// document that names no signatures (see ``Survey/isUnsigned``).
    init(
        data: Data,
        source: String,
        maxEntries: Int,
        requireSignature: Bool = false,
        letGo: ((_ before: Int) -> Void)? = nil,
        taker: (any ManifestEntryTaker)? = nil
    ) throws(ManifestError) {
        var conditionCache: [String: Condition] = [:]
        var entries: [ManifestEntry] = []
        // Sized once, from the number of `"filename"` keys: a list that grows by doubling ends up
        // to twice as large as it needs (100,000 entries of 88 bytes: 11.5 MB, not 8.8), at the
        // peak of a large bundle's sync. A key spelled with escapes is not counted; the list
        // then grows as usual.
        // The list's compact text, which a signature covers in its place (13 MB for 100,000
        // entries, where their values were 37 MB): kept only when the document names
        // `signatures` at all. A key spelled with escapes is not found so; see `release(of:)`.
        let survey = Self.survey(data, maxEntries: maxEntries, letGo: letGo)
        // Where only signed content is accepted, a document that cannot be signed costs no parse.
        if requireSignature, survey.isUnsigned { throw ManifestError(source: source, problem: .unsigned) }
        if let taker { taker.expect(survey.entries) } else { entries.reserveCapacity(survey.entries) }
        var read = 0
        var stopped: ManifestError?
        var listText: [UInt8]? = survey.namesSignatures ? [] : nil
        let document: JSONValue
        do throws(JSONSyntaxError) {
            document = try JSONReader.parse(data, streaming: "files") { item, end in
                if read % 1024 == 1023 { letGo?(end) }
                if listText?.isEmpty == false { listText?.append(UInt8(ascii: ",")) }
                listText?.append(contentsOf: item.serializedBytes(indent: 0))
                guard read < maxEntries else {
                    stopped = ManifestError(source: source, problem: .tooManyEntries(limit: maxEntries))
                    return false
                }
                do throws(ManifestEntry.Problem) {
                    let entry = try ManifestEntry(json: item, conditionCache: &conditionCache)
                    if taker?.take(entry, at: read) != true { entries.append(entry) }
                } catch {
                    let filename = item["filename"]?.string
                    stopped = ManifestError(source: source, problem: .entry(index: read, filename: filename, error))
                    return false
                }
                read += 1
                return true
            }
        } catch {
            throw stopped ?? ManifestError(source: source, problem: .invalidJSON(error))
        }
        if document.array != nil {
            form = .legacyArray
        } else if document["files"]?.array != nil {
            // Which of two lists would count is a question two readers could answer differently.
            guard (document.pairs ?? []).count(where: { $0.key == "files" }) == 1 else {
                throw ManifestError(source: source, problem: .unexpectedShape("more than one \"files\" member"))
            }
            form = .object(format: document["format"]?.integer.map(Int.init) ?? 2)
            release = try Self.release(of: document, listText: listText, data: data, source: source)
            do {
                layout = try ContentLayout(document: document)
                pack = try FilePack(document: document)
            } catch {
                throw ManifestError(source: source, problem: .unexpectedShape(error.description))
            }
        } else {
            throw ManifestError(
                source: source,
                problem: .unexpectedShape("expected an array of entries, or an object with a \"files\" array")
            )
        }
        // The list grew by doubling: up to half of it may be room never used, held through the
        // walk of the tree, at its peak (4 MB at 100,000 entries). A copy of the right size lets it go.
        entries.trimRoom()
        self.entries = entries
    }

    /// The release fields of a document whose `files` list was streamed: its compact text
    /// (`listText`, the elements without brackets) stands in its place in a signature's message.
    /// A document signed under a key the search for `signatures` missed (spelled with escapes)
    /// has no such text: it is read again whole, so that its signature is checked all the same.
    private static func release(
        of document: JSONValue,
        listText: [UInt8]?,
        data: Data,
        source: String
    ) throws(ManifestError) -> ReleaseFields {
        if let listText {
            let list = [UInt8(ascii: "[")] + listText + [UInt8(ascii: "]")]
            return try ReleaseFields(document: document, source: source, streamedList: ("files", list))
        }
        guard document[ManifestSignature.member] != nil else {
            return try ReleaseFields(document: document, source: source)
        }
        let whole: JSONValue
        do throws(JSONSyntaxError) { whole = try JSONReader.parse(data) } catch {
            throw ManifestError(source: source, problem: .invalidJSON(error))
        }
        return try ReleaseFields(document: whole, source: source)
    }
}

/// One file a manifest offers.
package struct ManifestEntry: Sendable, Hashable {
    /// Where the file lives, relative to the manifest's folder.
    package var path: BundlePath
    /// The expected digest; `nil` when the file's existence is enough.
    package var hash: ContentHash?
    /// The expected size in bytes, when the manifest declares it.
    package var size: Int64?
    /// When this file applies.
    package var condition: Condition
    /// What is wrong with this entry's digest or size, when it could not be read.
    ///
    /// Such an entry still loads, so that a manifest whose broken entry serves other devices
    /// (the original FreshAir's own example has a placeholder digest on a file iOS never
    /// selects) works on this one; a device that selects the entry refuses the manifest.
    package var defect: Problem? {
        get { storedDefect?.problem }
        set { storedDefect = newValue.map(Defect.init) }
    }
    /// Boxed: an entry holds a pointer for it, not the 48 bytes of `Problem`'s largest case (an
    /// entry went from 128 to 88 bytes: 4 MB at 100,000 entries). Not an `indirect` enum: one
    /// crashed on being thrown (typed throws, Swift 6.3, a debug build).
    private var storedDefect: Defect?

    private final class Defect: Sendable, Hashable {
        let problem: Problem
        init(_ problem: Problem) { self.problem = problem }
        static func == (lhs: Defect, rhs: Defect) -> Bool { lhs.problem == rhs.problem }
        func hash(into hasher: inout Hasher) { hasher.combine(problem) }
    }

    /// An entry for `path`, with its digest and size when known, selected where `condition` holds.
    package init(path: BundlePath, hash: ContentHash? = nil, size: Int64? = nil, condition: Condition = .always) {
        self.path = path
        self.hash = hash
        self.size = size
        self.condition = condition
    }

    /// The members FreshAir reads in an entry.
    package static let knownMembers: Set<String> = ["filename", "sha", "SHA", "size", "condition", "conditions"]
    /// The members FreshAir reads in one of `conditions`' objects.
    package static let knownRequirementMembers: Set<String> = ["key", "value", "comparison"]

    /// `true` for `…/Name.freshair/manifest.json`: a child manifest, followed recursively.
    package var isChildManifest: Bool { path.isChildManifest }

    /// What is wrong with one entry.
    package enum Problem: Error, Sendable, Hashable, CustomStringConvertible {
        /// The entry is not a JSON object.
        case notAnObject
        /// The entry has no `filename` string.
        case missingFilename
        /// The `filename` is unsafe (`..`, absolute, empty components…).
        case unsafePath(BundlePath.Rejection)
        /// The `sha` is not 40 or 64 hex digits.
        case invalidHash(String)
        /// The `size` is not a whole number of bytes.
        case invalidSize(String)
        /// The `condition` does not parse.
        case invalidCondition(ConditionSyntaxError)
        /// An item of `conditions` is malformed.
        case invalidRequirement(index: Int, String)
        /// The app pins signing keys, and this entry has no digest to check the file against.
        case noDigestInSignedBundle
        /// The bundle is published in the object layout, which names every file by its
        /// SHA-256, and this entry has none.
        case noSHA256InObjectLayout

        package var description: String {
            switch self {
            case .notAnObject: return "an entry must be a JSON object"
            case .missingFilename: return "\"filename\" is missing or not a string"
            case .unsafePath(let rejection): return rejection.description
            case .invalidHash(let value):
                return
                    "\"sha\" must be 40 (SHA-1) or 64 (SHA-256) hex digits, found \"\(value)\"; recompute it"
            case .invalidSize(let value): return "\"size\" must be a whole number of bytes, found \(value)"
            case .invalidCondition(let error): return "condition: \(error)"
            case .invalidRequirement(let index, let detail): return "conditions[\(index)]: \(detail)"
            case .noDigestInSignedBundle:
                return "has no \"sha\"; in a signed bundle every file needs one: recompute the digests, then sign again"
            case .noSHA256InObjectLayout:
                return
                    "has no SHA-256 \"sha\", and the object layout fetches every file by its SHA-256: "
                    + "run `breeze hash --sha256`, then publish again"
            }
        }
    }

    init(json: JSONValue, conditionCache: inout [String: Condition]) throws(Problem) {
        guard case .object(let pairs) = json else { throw .notAnObject }
        var filename: String?
        var lowerDigest: JSONValue?
        var upperDigest: JSONValue?
        var declaredSize: JSONValue?
        var conditionText: String?
        var requirements: JSONValue?
        for (key, value) in pairs {
            switch key {
            case "filename": filename = value.string
            case "sha": lowerDigest = value
            case "SHA": upperDigest = value
            case "size": declaredSize = value
            case "condition": conditionText = value.string
            case "conditions": requirements = value
            default: break
            }
        }
        guard let filename else { throw .missingFilename }
        do { path = try BundlePath(filename) } catch { throw .unsafePath(error) }
        let digest = lowerDigest ?? upperDigest  // "sha" wins when both are written

        // A bad digest or size matters only to a device that selects the entry (see `defect`).
        if let digest, !digest.isNull {
            if let text = digest.string, let parsed = ContentHash(hex: text) {
                hash = parsed
            } else {
                storedDefect = Defect(.invalidHash(digest.string ?? digest.serialized(indent: 0)))
            }
        }
        if let declaredSize, !declaredSize.isNull {
            if let bytes = declaredSize.integer, bytes >= 0 {
                size = bytes
            } else {
                storedDefect = storedDefect ?? Defect(.invalidSize(declaredSize.serialized(indent: 0)))
            }
        }

        var parts: [Condition] = []
        if let text = conditionText, !text.trimmingCharacters(in: .whitespaces).isEmpty {
            if let cached = conditionCache[text] {
                parts.append(cached)
            } else {
                do {
                    let parsed = try Condition(parsing: text)
                    conditionCache[text] = parsed
                    parts.append(parsed)
                } catch { throw .invalidCondition(error) }
            }
        }
        if let requirements, !requirements.isNull {
            guard let list = requirements.array else {
                throw .invalidRequirement(index: 0, "\"conditions\" must be an array")
            }
            parts.append(Condition(requirements: try Self.requirements(list)))
        }
        condition = parts.isEmpty ? .always : (parts.count == 1 ? parts[0] : .all(parts))
    }

    /// Reads the JSON form's `{"key", "value", "comparison"}` objects.
    static func requirements(
        _ list: [JSONValue]
    ) throws(Problem) -> [(key: String, value: ConditionValue, comparison: ComparisonOperator)] {
        var result: [(key: String, value: ConditionValue, comparison: ComparisonOperator)] = []
        for (index, item) in list.enumerated() {
            guard item.pairs != nil else { throw .invalidRequirement(index: index, "must be an object") }
            guard let key = item["key"]?.string, !key.isEmpty else {
                throw .invalidRequirement(index: index, "\"key\" is missing")
            }
            let value: ConditionValue
            switch item["value"] {
            case .string(let text)?: value = .string(text)
            case .bool(let flag)?: value = .bool(flag)
            case .number?: value = .number(item["value"]?.numberValueText ?? "")
            default: throw .invalidRequirement(index: index, "\"value\" is missing or not a string")
            }
            let comparison: ComparisonOperator
            if let name = item["comparison"]?.string {
                guard let op = ComparisonOperator(jsonName: name) else {
                    throw .invalidRequirement(
                        index: index,
                        "unknown comparison \"\(name)\"; use eq, ne, gt, gte, lt or lte"
                    )
                }
                comparison = op
            } else {
                comparison = .greaterOrEqual
            }
            result.append((key, value, comparison))
        }
        return result
    }
}

/// A manifest that could not be read, naming the document, the entry and the problem.
package struct ManifestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with a manifest.
    package enum Problem: Sendable, Hashable {
        /// Not JSON.
        case invalidJSON(JSONSyntaxError)
        /// JSON, but not a manifest's shape.
        case unexpectedShape(String)
        /// Entry `index` (named `filename` when it has one) is wrong.
        case entry(index: Int, filename: String?, ManifestEntry.Problem)
        /// The document is larger than ``SyncConfiguration/maxDocumentSize``.
        case tooLarge(limit: Int64)
        /// Child manifests nest deeper than allowed.
        case tooDeep(limit: Int)
        /// Two entries would be one file on a Mac, or one is a folder of the other.
        case pathConflict(BundlePath, BundlePath)
        /// A path is unsafe, or two paths are one name on an Apple device (case, normalization).
        case unsafePath(BundlePath.Rejection)
        /// The manifests of one bundle add up to more than the configured cap.
        case treeTooLarge(limit: Int)
        /// The manifests of one bundle list more entries than ``SyncConfiguration/maxManifestEntries``.
        case tooManyEntries(limit: Int)
        /// The root manifest's `sequence` is below the installed one's.
        case olderSequence(installed: Int, offered: Int)
        /// The root manifest's `expires` date has passed.
        case expired(Date)
        /// With keys pinned, the document lacks `identity`, `sequence` or `expires`.
        case missingSignedField(String)
        /// The document names another identity than the app expects (one bundle served for another).
        case wrongIdentity(expected: String, found: String)
        /// The same sequence as the document accepted before, with other content (a replay).
        case replayedSequence(Int)
        /// The app pins signing keys and the root manifest carries no signature.
        case unsigned
        /// Signed, but by none of the keys the app pins.
        case untrustedSigner([String])
        /// A key the app pins is the private key of this document's signer `publicKey`: the app
        /// ships the secret that signs its content.
        case pinnedPrivateKey(publicKey: String)
        /// A trusted key's signature does not match the manifest's content.
        case signatureInvalid
        /// Fewer trusted keys signed than the app's key document requires.
        case belowThreshold(valid: Int, required: Int)
    }

    /// The manifest's URL or path.
    package var source: String
    /// What is wrong.
    package var problem: Problem

    /// An error about the document at `source`.
    package init(source: String, problem: Problem) {
        self.source = source
        self.problem = problem
    }

    package var description: String { "\(source): \(detail)" }

    /// The problem without the document's name, for reports that name it already.
    /// Whether ``detail`` already says what the publisher does (a signed release's problems,
    /// the caps): the words of a failure then add nothing of their own.
    package var saysWhatToDo: Bool {
        switch problem {
        case .invalidJSON, .unexpectedShape, .entry, .tooLarge, .tooDeep, .pathConflict, .unsafePath: return false
        case .treeTooLarge, .tooManyEntries, .olderSequence, .missingSignedField, .wrongIdentity, .replayedSequence,
            .expired, .unsigned, .untrustedSigner, .pinnedPrivateKey, .belowThreshold, .signatureInvalid:
            return true
        }
    }

    /// The problem in one line: everything from the document (names, dates, identities) with
    /// what a terminal would act on escaped, line feeds included, so that no document can
    /// forge a line of its own ("breeze: hint: …") under the message.
    package var detail: String { PrintableText.escaped(words) }

    private var words: String {
        switch problem {
        case .invalidJSON(let error): return "\(error)"
        case .unexpectedShape(let detail): return detail
        case .entry(let index, let filename, let problem):
            let name = filename.map { " (\"\($0)\")" } ?? ""
            return "entry \(index)\(name): \(problem)"
        case .tooLarge(let limit): return "larger than the \(limit)-byte limit for a manifest"
        case .tooDeep(let limit): return "child manifests nest deeper than \(limit) levels (a cycle?)"
        case .pathConflict(let file, let folder):
            return "\"\(file)\" is listed as a file and also as a folder of \"\(folder)\""
        case .unsafePath(let rejection): return rejection.description
        case .treeTooLarge(let limit):
            return
                "the bundle's manifests add up to more than \(limit) bytes (SyncConfiguration.maxManifestTreeSize); split less, or raise the cap"
        case .tooManyEntries(let limit):
            return
                "the bundle's manifests list more than \(limit) entries (SyncConfiguration.maxManifestEntries); "
                + "split the bundle, or raise the cap"
        case .olderSequence(let installed, let offered):
            return
                "sequence \(offered) is older than \(installed), the newest this device has accepted, so it was refused (a stale "
                + "cached copy, an old manifest uploaded again, or a replay); publish with a sequence above \(installed)"
        case .missingSignedField(let field):
            return
                "has no \"\(field)\", which this app requires of signed documents (it pins keys or a minimum sequence); "
                + "sign it again with identity, sequence and expires"
        case .wrongIdentity(let expected, let found):
            return
                "is signed for \"\(found)\", but this app expects \"\(expected)\" here (one signed document served in place of "
                + "another?); sign it for \"\(expected)\", or set SyncConfiguration.expectedIdentity"
        case .replayedSequence(let sequence):
            return
                "has sequence \(sequence), the same as the document accepted before but different content (a replay, or content "
                + "re-signed without moving the sequence on); sign it again with a higher sequence"
        case .expired(let date):
            return
                "expired at \(date.formatted(.iso8601)); the installed content stays, but the publisher must sign it again and publish it"
        case .unsigned:
            return
                "not signed, and this app accepts only signed content; sign it with a key the app pins and publish again"
        case .untrustedSigner(let keys):
            return
                "signed by \(keys.joined(separator: ", ")), none of which this app trusts; sign with a key the app pins"
        case .pinnedPrivateKey(let publicKey):
            return
                "signed by \(publicKey), whose private key this app pins in place of the public one: anyone who reads the app can sign content it accepts. Pin \(publicKey) instead, and sign the next release with a new key, since this one is no longer secret"
        case .belowThreshold(let valid, let required):
            return
                "signed by \(valid) trusted key\(valid == 1 ? "" : "s"), but this app's key document requires \(required); "
                + "sign it with more of the keys it lists"
        case .signatureInvalid:
            return "the signature does not match the content (changed after signing, or damaged on the way); "
                + "the installed content stays; sign it again after the last change and publish"
        }
    }
}

/// Takes a manifest's entries as the parser reads them, in place of the manifest's list: the
/// root of a sync selects its files so, and never holds a list of every entry (8.8 MB at
/// 100,000).
protocol ManifestEntryTaker: AnyObject {
    /// How many entries the document seems to list (its `"filename"` keys), before the first.
    func expect(_ count: Int)
    /// Offered each entry with its index in the document; answers `true` when it took the
    /// entry, `false` to leave it in the manifest's ``Manifest/entries``.
    func take(_ entry: ManifestEntry, at index: Int) -> Bool
}

extension Manifest {
    /// What one pass over a document's bytes finds before it is parsed.
    struct Survey: Equatable {
        /// `"filename"` keys, up to the cap asked for.
        var entries = 0
        /// Whether `signatures` occurs anywhere.
        var namesSignatures = false
        /// Whether a `\u` escape occurs: the only way a key spells `signatures` unseen.
        var hasUnicodeEscape = false

        /// Whether the document cannot be signed: it names no `signatures` member, even escaped.
        var isUnsigned: Bool { !namesSignatures && !hasUnicodeEscape }
    }

    /// How many `"filename"` keys `data` has (up to `maxEntries`), and whether it names
    /// `signatures`: one pass, a megabyte at a time, each let go once passed (`letGo`), so that
    /// a mapped root of 14 MB is never held whole for two searches before its parse.
    static func survey(_ data: Data, maxEntries: Int, letGo: ((_ before: Int) -> Void)?) -> Survey {
        let (filename, signatures) = (Array(#""filename""#.utf8), Array(ManifestSignature.member.utf8))
        let escape = Array(#"\u"#.utf8)
        let window = 1 << 20
        var survey = Survey()
        data.withUnsafeBytes { bytes in
            for start in stride(from: 0, to: bytes.count, by: window) {
                // A key that starts in this window is counted here, even if it ends in the next.
                let end = min(bytes.count, start + window + max(filename.count, signatures.count) - 1)
                let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                var offset = 0
                while survey.entries < maxEntries, offset < window,
                    let found = ByteSearch.firstOffset(
                        of: filename,
                        in: UnsafeRawBufferPointer(rebasing: slice[offset...])
                    ),
                    offset + found < window
                {
                    survey.entries += 1
                    offset += found + filename.count
                }
                if !survey.namesSignatures, let found = ByteSearch.firstOffset(of: signatures, in: slice),
                    found < window
                {
                    survey.namesSignatures = true
                }
                if !survey.hasUnicodeEscape, let found = ByteSearch.firstOffset(of: escape, in: slice), found < window {
                    survey.hasUnicodeEscape = true
                }
                letGo?(min(start + window, bytes.count))
            }
        }
        return survey
    }
}
