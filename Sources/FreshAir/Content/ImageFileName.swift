/// An image file name read into the parts lookup and authoring care about:
/// `icon~ipad@2x.png` is image `icon` for device `ipad` at scale 2.
///
/// One reading serves both sides: ``ContentBundle/imageURL(named:subdirectory:)`` picks a
/// variant by it, and `breeze generate` infers conditions from it.
package struct ImageFileName: Sendable, Hashable {
    /// The extensions an image may have.
    package static let extensions: Set<String> = ["png", "jpg", "jpeg", "pdf", "heic", "webp", "gif"]

    /// The whole file name.
    package var fileName: String
    /// The image's name without device, scale or extension (`icon`).
    package var base: String
    /// `ipad`, `iphone`…, lowercased; `nil` for every device.
    package var device: String?
    /// 1, 2 or 3.
    package var scale: Int
    /// The extension as written (`png`).
    package var ext: String

    /// `nil` when the name has no image extension.
    package init?(_ fileName: String) {
        guard let dot = fileName.lastIndex(of: ".") else { return nil }
        ext = String(fileName[fileName.index(after: dot)...])
        guard Self.extensions.contains(ext.lowercased()) else { return nil }
        var stem = String(fileName[..<dot])
        scale = 1
        for candidate in [3, 2, 1] where stem.hasSuffix("@\(candidate)x") {
            stem.removeLast(3)
            scale = candidate
        }
        if let tilde = stem.lastIndex(of: "~") {
            device = stem[stem.index(after: tilde)...].lowercased()
            stem = String(stem[..<tilde])
        }
        self.fileName = fileName
        base = stem
    }

    /// The file name of this image for another device or scale.
    package func variant(device: String?, scale: Int) -> String {
        base + (device.map { "~\($0)" } ?? "") + (scale > 1 ? "@\(scale)x" : "") + "." + ext
    }
}
