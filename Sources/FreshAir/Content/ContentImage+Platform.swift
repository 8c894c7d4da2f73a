public import Foundation

#if canImport(UIKit)
public import UIKit
#elseif canImport(AppKit)
public import AppKit
#endif

// The Apple seam for images: a ContentImage drawn by UIKit or AppKit at its scale. Linux has
// neither; which file and which scale is ContentBundle's decision, tested there.

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
