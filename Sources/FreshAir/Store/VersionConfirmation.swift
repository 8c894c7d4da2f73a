import Foundation

/// Confirm-or-roll-back: a new version stays only once the app says it works.
extension BundleStore {
    /// Tells the store the live version works: call it once the app has used new content
    /// successfully. A version that is never confirmed is rolled back by
    /// ``rollBackIfUnconfirmed(allowedLaunches:inForeground:)``.
    public func confirmLive() async throws {
        try await update { update in
            guard var record = update.live, !record.confirmed else { return }
            record.confirmed = true
            record.unconfirmedLaunches = 0
            try update.writeRecord(record)
        }
    }

    /// Confirm-or-roll-back, for apps that adopt it: call at launch, before reading content.
    /// Each call counts a launch of an unconfirmed live version; once it has been launched
    /// `allowedLaunches` times without ``confirmLive()`` (the app crashed or found the content
    /// unusable), the previous version goes live again and the failed content is remembered,
    /// so syncs do not install it again until something new is published.
    ///
    /// A background launch (a `BGAppRefreshTask`, a silent push) runs the app's start-up code
    /// too, but shows the user nothing: pass `inForeground: false` there, and the launch is not
    /// counted, so good content is never rolled back because the system woke the app.
    ///
    /// - Returns: the version now live after a rollback, or `nil` when nothing was rolled back
    ///   (confirmed, still within its launches, a background launch, or nothing earlier to go
    ///   back to).
    @discardableResult
    public func rollBackIfUnconfirmed(allowedLaunches: Int = 1, inForeground: Bool = true) async throws -> Int? {
        guard inForeground else { return nil }
        return try await restoreIfUnconfirmed(allowedLaunches: allowedLaunches)?.id
    }

    /// ``rollBackIfUnconfirmed(allowedLaunches:inForeground:)`` for a foreground launch,
    /// returning the record of the version now live.
    package func restoreIfUnconfirmed(allowedLaunches: Int = 1) async throws -> VersionRecord? {
        try await update { (update: inout StoreUpdate) -> VersionRecord? in
            guard var record = update.live, !record.confirmed else { return nil }
            let launches = record.unconfirmedLaunches
            guard launches >= allowedLaunches, let previousID = update.restorableID else {
                record.unconfirmedLaunches = launches + 1
                try update.writeRecord(record)
                return nil
            }
            try rememberRejected(record)
            var previous = try update.restore(previousID)
            // The version gone back to worked before: it needs no confirmation now.
            previous.confirmed = true
            try update.writeRecord(previous)
            return previous
        }
    }

    /// What a version rolled back by ``rollBackIfUnconfirmed(allowedLaunches:inForeground:)`` was, so that
    /// no delivery mode installs it again: every mode asks the server with its validators
    /// (a `304` means the server still has only that), and a bundle sync also compares the
    /// root manifest's digest, for servers that send no validators.
    struct RejectedContent: Hashable {
        var source: String
        var validators: HTTPValidators?
        /// SHA-256 of the root manifest, hex (bundles).
        var rootDigest: String?

        var json: JSONValue {
            var pairs: [(key: String, value: JSONValue)] = [("source", .string(source))]
            if let etag = validators?.etag { pairs.append(("etag", .string(etag))) }
            if let lastModified = validators?.lastModified { pairs.append(("lastModified", .string(lastModified))) }
            if let rootDigest { pairs.append(("rootDigest", .string(rootDigest))) }
            return .object(pairs)
        }

        init(source: String, validators: HTTPValidators?, rootDigest: String?) {
            self.source = source
            self.validators = validators?.isEmpty == true ? nil : validators
            self.rootDigest = rootDigest
        }

        /// What the server answered, as far as a rollback goes.
        enum Answer: Hashable {
            /// `304` to a request made with the validators this device asks with.
            case notModified
            /// A root manifest whose SHA-256 (hex) is this.
            case document(sha256: String)
            /// Asked for by a URL that names one version (a repository bundle's archive).
            case versionedURL
        }

        /// Whether `answer` still offers what `rejected` (this device's rollback from the
        /// source, if any) was, so the live version stays: the one rule every delivery mode
        /// applies before it installs.
        static func keepsRollback(_ rejected: RejectedContent?, after answer: Answer) -> Bool {
            guard let rejected else { return false }
            switch answer {
            // Asked with the rejected content's validators, when it had any.
            case .notModified: return rejected.validators != nil
            // For servers that send no validators: the same bytes again.
            case .document(let digest): return rejected.rootDigest == digest
            case .versionedURL: return true
            }
        }

        /// The validators to ask the server with: after a rollback, those of what was rolled
        /// back from, so that a `304` means the server offers nothing newer than it.
        static func validatorsToAsk(rejected: RejectedContent?, live: HTTPValidators?) -> HTTPValidators? {
            rejected?.validators ?? live
        }

        init?(json: JSONValue) {
            guard let source = json["source"]?.string else { return nil }
            self.init(
                source: source,
                validators: HTTPValidators(etag: json["etag"]?.string, lastModified: json["lastModified"]?.string),
                rootDigest: json["rootDigest"]?.string
            )
        }
    }

    var rejectedPath: String { stateFolder.appendingPathComponent("rejected.json").path }

    /// What was rolled back from `source`, while nothing newer from it has been installed.
    func rejected(from source: String) throws -> RejectedContent? {
        try allRejected()[source]
    }

    /// A damaged file counts as empty: at worst a rejected version is offered again, which is
    /// better than a store that can never update.
    private func allRejected() throws -> [String: RejectedContent] {
        guard let data = FileManager.default.contents(atPath: rejectedPath),
            let items = (try? JSONReader.parse(data))?.array?.compactMap(RejectedContent.init(json:))
        else { return [:] }
        return Dictionary(items.map { ($0.source, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Remembers `record`'s content as rolled back from, so that no sync installs it again.
    func rememberRejected(_ record: VersionRecord) throws {
        try rememberRejected(
            RejectedContent(
                source: record.source,
                validators: record.validators,
                rootDigest: record.file(at: "manifest.json")?.hash.hex
            )
        )
    }

    private func rememberRejected(_ content: RejectedContent) throws {
        var all = try allRejected()
        all[content.source] = content
        try saveRejected(all)
    }

    /// Called when a new version from `source` goes live: what was rejected is history.
    func forgetRejected(from source: String) throws {
        var all = try allRejected()
        guard all.removeValue(forKey: source) != nil else { return }
        try saveRejected(all)
    }

    private func saveRejected(_ all: [String: RejectedContent]) throws {
        let items = all.keys.sorted().map { all[$0]!.json }
        try Disk.writeAtomically(Data(JSONValue.array(items).serializedBytes()), to: rejectedPath)
    }

}
