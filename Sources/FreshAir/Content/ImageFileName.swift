/// An image file name read into the parts lookup and authoring care about:
/// `icon@2x~ipad.png` (Apple's order: scale, then device) and `icon~ipad@2x.png` are both image
/// `icon` for device `ipad` at scale 2.
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
        var scale = Self.removeScale(from: &stem)
        if let tilde = stem.lastIndex(of: "~") {
            device = stem[stem.index(after: tilde)...].lowercased()
            stem = String(stem[..<tilde])
        }
        if scale == nil { scale = Self.removeScale(from: &stem) }  // `icon@2x~ipad`
        self.scale = scale ?? 1
        self.fileName = fileName
        base = stem
    }

    /// The scale a stem ends with (`@2x`), removed from it; `nil` when it ends with none.
    private static func removeScale(from stem: inout String) -> Int? {
        for candidate in [3, 2, 1] where stem.hasSuffix("@\(candidate)x") {
            stem.removeLast(3)
            return candidate
        }
        return nil
    }

    /// The file names this image has for another device or scale, in either order of the two
    /// (`icon@2x~ipad.png`, `icon~ipad@2x.png`); one name when there is no device or no scale.
    package func variants(device: String?, scale: Int) -> [String] {
        let scaleSuffix = scale > 1 ? "@\(scale)x" : ""
        guard let device else { return [base + scaleSuffix + "." + ext] }
        let apple = base + scaleSuffix + "~\(device)." + ext
        let deviceFirst = base + "~\(device)" + scaleSuffix + "." + ext
        return apple == deviceFirst ? [apple] : [apple, deviceFirst]
    }
}
