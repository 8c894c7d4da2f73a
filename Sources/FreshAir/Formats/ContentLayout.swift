package import Foundation

/// Where a bundle's files are on the server, as its root manifest records it.
///
/// - ``paths`` (the default, and what every manifest without a `layout` member means): each
///   file at its path beside the manifest that lists it, as the original FreshAir served them.
/// - ``objects(at:)`` (`"layout": "objects"`, written by `breeze publish --layout objects`):
///   each file, child manifests included, at `objects/<sha256>`, named by its bytes' SHA-256.
///   Such an object never changes, so a CDN may keep it for ever; only the root manifest is
///   ever overwritten. A device that reads a manifest mid-publish finds every object it names,
///   and a file shared by several versions or bundles is stored once. `"objects"` may name
///   another folder for the objects, relative to the bundle's, such as `"../objects/"` for one
///   store that several bundles share.
///
/// Digests are checked the same way in both: the layout says only where bytes are fetched from.
package enum ContentLayout: Sendable, Hashable, CustomStringConvertible {
    /// Files at their paths.
    case paths
    /// Files at `<location><sha256>`, `location` a relative folder reference ending in `/`.
    case objects(at: String)

    /// The root manifest's member naming the layout.
    package static let member = "layout"
    /// The root manifest's member naming the objects' folder (object layout only).
    package static let locationMember = "objects"
    /// Where objects are when the manifest does not say.
    package static let defaultLocation = "objects/"

    /// The object layout with its objects in `objects/` beside the root manifest.
    package static let objects = ContentLayout.objects(at: defaultLocation)

    /// Reads the layout from a root manifest's top-level members.
    ///
    /// - Throws: a description of what is wrong: an unknown layout (written by a newer
    ///   `breeze`), or an objects folder that is not a plain relative path.
    init(document: JSONValue) throws(LayoutProblem) {
        guard let value = document[Self.member] else {
            self = .paths
            return
        }
        switch value.string {
        case "paths"?: self = .paths
        case "objects"?:
            let location = document[Self.locationMember].map { $0.string ?? "" } ?? Self.defaultLocation
            self = .objects(at: try Self.checkedLocation(location))
        default:
            throw LayoutProblem(
                "\"\(Self.member)\" is \(value.serialized(indent: 0)); this FreshAir reads \"paths\" and \"objects\" "
                    + "(a newer breeze wrote it?): update the app, or publish with --layout paths"
            )
        }
    }

    /// A folder reference devices can follow: `/`-separated names of letters, digits, `.`,
    /// `_` and `-`, leading `..` segments allowed, nothing else. No scheme, host, query or
    /// percent sign: objects stay on the bundle's own server, and the reference means the
    /// same on every device and in every URL parser.
    package static func checkedLocation(_ text: String) throws(LayoutProblem) -> String {
        var segments = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if segments.last == "" { segments.removeLast() }
        let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        var seenName = false
        for segment in segments {
            if segment == ".." && !seenName { continue }
            guard !segment.isEmpty, segment != ".", segment != "..", segment.allSatisfy(allowed.contains) else {
                throw LayoutProblem(
                    "\"\(locationMember)\" must be a relative folder such as \"objects/\" or \"../objects/\", found \"\(text)\""
                )
            }
            seenName = true
        }
        guard seenName else {
            throw LayoutProblem("\"\(locationMember)\" must name a folder, found \"\(text)\"")
        }
        return segments.joined(separator: "/") + "/"
    }

    /// Where the file at `path` with digest `hash` is fetched from, the bundle's folder being
    /// `base` (ending in `/`). In the object layout a file without a SHA-256 digest has no
    /// object: a sync refuses a manifest that selects one before it asks for any file.
    package func url(for path: BundlePath, hash: ContentHash?, base: URL) -> URL {
        guard case .objects(let location) = self, let hash, hash.algorithm == .sha256,
            let url = URL(string: location + hash.hex, relativeTo: base)?.absoluteURL
        else { return path.url(relativeTo: base) }
        return url
    }

    package var description: String {
        switch self {
        case .paths: "paths"
        case .objects(let location): location == Self.defaultLocation ? "objects" : "objects at \(location)"
        }
    }
}

/// A `layout` or `objects` member that cannot be followed.
package struct LayoutProblem: Error, Sendable, Hashable, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
