import Foundation

/// A relative path inside a bundle, checked so that it can never leave it.
///
/// Refused: empty paths, absolute paths, `.` and `..` components, empty components
/// (`a//b`), backslashes, NUL and other control characters, components over 255 bytes and
/// paths over 1024 bytes.
public struct BundlePath: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// The path with `/` separators, never starting or ending with one.
    public let string: String

    /// Why a path was refused.
    public struct Rejection: Error, Sendable, Hashable, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "unsafe path \"\(path)\": \(reason)" }
    }

    public init(_ text: String) throws(Rejection) {
        func reject(_ reason: String) -> Rejection { Rejection(path: text, reason: reason) }
        if text.isEmpty { throw reject("it is empty") }
        if text.utf8.count > 1024 { throw reject("it is longer than 1024 bytes") }
        if text.hasPrefix("/") || text.hasPrefix("~") { throw reject("it is absolute; paths are relative to the bundle") }
        if text.contains("\\") { throw reject("it contains a backslash; use '/' between folders") }
        if text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw reject("it contains a control character")
        }
        for component in text.split(separator: "/", omittingEmptySubsequences: false) {
            switch component {
            case "": throw reject("it has an empty folder name ('//' or a trailing '/')")
            case ".", "..": throw reject("'\(component)' would step outside the bundle")
            default:
                if component.utf8.count > 255 { throw reject("a name is longer than 255 bytes") }
            }
        }
        string = text
    }

    /// The path's components.
    public var components: [Substring] { string.split(separator: "/") }

    /// The last component.
    public var lastComponent: Substring { components.last ?? Substring(string) }

    /// How the path of a child manifest ends: `Name.freshair/manifest.json`.
    public static let childManifestSuffix = ".freshair/manifest.json"

    /// `true` for `…/Name.freshair/manifest.json`: a child manifest, followed recursively.
    public var isChildManifest: Bool { string.hasSuffix(Self.childManifestSuffix) }

    /// The folder holding this path, or `nil` at the bundle root.
    public var parent: BundlePath? {
        guard let slash = string.lastIndex(of: "/") else { return nil }
        return BundlePath(trusted: String(string[..<slash]))
    }

    /// `other` inside this folder.
    public func appending(_ other: BundlePath) -> BundlePath {
        BundlePath(trusted: string + "/" + other.string)
    }

    /// Joins an optional folder prefix with a path.
    static func join(_ prefix: BundlePath?, _ path: BundlePath) -> BundlePath {
        prefix.map { $0.appending(path) } ?? path
    }

    init(trusted: String) { string = trusted }

    /// Where the file is published, below a bundle's base URL (which ends in `/`).
    public func url(relativeTo base: URL) -> URL { base.appendingPathComponent(string) }

    public var description: String { string }

    public static func < (lhs: BundlePath, rhs: BundlePath) -> Bool { lhs.string < rhs.string }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try BundlePath(text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(string)
    }
}
