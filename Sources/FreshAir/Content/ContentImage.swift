public import Foundation

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
