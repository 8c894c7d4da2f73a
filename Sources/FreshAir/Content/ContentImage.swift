public import Foundation

#if canImport(UIKit)
public import UIKit
#elseif canImport(AppKit)
public import AppKit
#endif

/// An image file of the content and the scale it was drawn for: draw it at ``scale`` and an
/// `@3x` file is as big in points on a 3× screen as its `@1x` sibling on a 1× one.
///
/// ```swift
/// if let hero = content.live.image(named: "hero"), let image = hero.uiImage() {
///     Image(uiImage: image)  // @3x art at its size in points, not three times too big
/// }
/// ```
public struct ContentImage: Sendable, Hashable {
    /// The file.
    public var url: URL
    /// 1, 2 or 3: the `@2x`, `@3x` of its name (1 without one).
    public var scale: Double

    /// An image file drawn for `scale`.
    public init(url: URL, scale: Double) {
        self.url = url
        self.scale = scale
    }
}

#if canImport(UIKit)
extension ContentImage {
    /// The image at its scale, read from disk now (so not from a view's `body` for large
    /// art: load it in a `.task`); `nil` when the file is unreadable or not an image.
    /// `UIImage(data:scale:)`: iOS 6, Mac Catalyst 13.1, tvOS, visionOS 1 (docs/APPLE.md).
    public func uiImage() -> UIImage? {
        guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return UIImage(data: data, scale: CGFloat(scale))
    }
}
#elseif canImport(AppKit)
extension ContentImage {
    /// The image sized in points for its scale: an `@2x` file of 200 pixels is 100 points
    /// wide. `nil` when the file is unreadable or not an image.
    public func nsImage() -> NSImage? {
        guard let image = NSImage(contentsOf: url), let pixels = image.representations.first else { return nil }
        if pixels.pixelsWide > 0, pixels.pixelsHigh > 0 {
            image.size = NSSize(width: Double(pixels.pixelsWide) / scale, height: Double(pixels.pixelsHigh) / scale)
        }
        return image
    }
}
#endif
